import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoopbackDns } from './helpers/dns-server.js'
import { firstStartKey, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-lifecycle-'))
const FIXTURES = join(import.meta.dirname, 'fixtures', 'feeds')
// Mail domains whose DNS never answers: a check of one stays in flight until the DNS deadline.
const dns = new LoopbackDns(
  Object.fromEntries(['slow1', 'slow2', 'slow3', 'slow4'].map((n) => [`${n}.example.com`, { silent: true }])),
)
beforeAll(() => dns.start())
afterAll(async () => {
  await dns.stop()
  rmSync(dir, { recursive: true, force: true })
})

const apiKeyOf = (logs: string): string => firstStartKey(logs)!

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20))
  if (!ok()) throw new Error(`timed out waiting for ${what}`)
}

describe('SIGTERM drains in-flight requests', () => {
  it('requests already running complete with 200, storage closes and the process exits 0', async () => {
    const sub = mkdtempSync(join(dir, 'drain-'))
    const server = await startServer({
      DATABASE_URL: join(sub, 'verdict.db'),
      VERDICT_DNS_SERVERS: dns.server,
      VERDICT_DNS_TIMEOUT_MS: '1500',
      VERDICT_SHUTDOWN_MS: '20000',
    })
    const headers = { 'x-api-key': apiKeyOf(server.logs()), 'content-type': 'application/json' }
    const domains = ['slow1.example.com', 'slow2.example.com', 'slow3.example.com']
    const inFlight = domains.map((d) =>
      fetch(`${server.url}/v1/check/email`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ email: `someone@${d}` }),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { email: { mx_status: string } },
      })),
    )
    // Every request has reached its DNS lookup, so all of them are running inside the server.
    await until('the DNS queries', () => domains.every((d) => dns.count(d, 'MX') > 0))
    const exited = server.signal('SIGTERM')
    const answers = await Promise.all(inFlight)
    for (const a of answers) {
      expect(a.status).toBe(200)
      expect(a.body.email.mx_status).toBe('unknown')
    }
    expect(await exited).toBe(0)
    expect(server.logs()).toContain('shutting down')
    // Storage was closed: closing the last SQLite connection folds the WAL in and removes it.
    expect(existsSync(join(sub, 'verdict.db-wal'))).toBe(false)
  })

  it('past VERDICT_SHUTDOWN_MS the process exits anyway, with status 1', async () => {
    const sub = mkdtempSync(join(dir, 'deadline-'))
    const server = await startServer({
      DATABASE_URL: join(sub, 'verdict.db'),
      VERDICT_DNS_SERVERS: dns.server,
      VERDICT_DNS_TIMEOUT_MS: '20000',
      VERDICT_SHUTDOWN_MS: '200',
    })
    const headers = { 'x-api-key': apiKeyOf(server.logs()), 'content-type': 'application/json' }
    const stuck = fetch(`${server.url}/v1/check/email`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email: 'someone@slow4.example.com' }),
    }).then(
      (r) => r.status,
      () => 'connection closed',
    )
    await until('the DNS query', () => dns.count('slow4.example.com', 'MX') > 0)
    expect(await server.signal('SIGTERM')).toBe(1)
    expect(await stuck).toBe('connection closed')
    expect(server.logs()).toContain('shutdown deadline passed')
  })
})

describe('start-up survives damaged feed metadata', () => {
  it('an unreadable or corrupt metadata file is logged, the server keeps running and loads the data', async () => {
    const sub = mkdtempSync(join(dir, 'feeds-'))
    const feeds = join(sub, 'feeds')
    mkdirSync(feeds)
    // Unreadable: a directory where the metadata file should be (EISDIR), with and without data.
    mkdirSync(join(feeds, 'tor.json'))
    writeFileSync(join(feeds, 'proxy.txt'), readFileSync(join(FIXTURES, 'firehol_proxies.netset')))
    mkdirSync(join(feeds, 'proxy.json'))
    // Corrupt.
    writeFileSync(join(feeds, 'vpn.json'), '{"name": "vpn", "fetchedAt": ')
    const server = await startServer({
      DATABASE_URL: join(sub, 'verdict.db'),
      VERDICT_FEEDS_DIR: feeds,
      VERDICT_FEEDS_RELOAD_MS: '1000',
    })
    try {
      await until('the warning', () => server.logs().includes('feed metadata unreadable'))
      // One poll of the watcher later it is still up.
      await until(
        'a reload poll',
        () => (server.logs().match(/feed (metadata unreadable|reload failed)/g) ?? []).length >= 2,
      )
      expect(server.alive()).toBe(true)
      const health = await fetch(`${server.url}/v1/health`, {
        headers: { 'x-api-key': apiKeyOf(server.logs()) },
      })
      expect(health.status).toBe(200)
      const sources = ((await health.json()) as { sources: { name: string; loaded: boolean }[] }).sources
      expect(sources.find((s) => s.name === 'proxy')?.loaded).toBe(true)
    } finally {
      await server.stop()
    }
  })
})
