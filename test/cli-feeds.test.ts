import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, runCliAsync } from './helpers/processes.js'

const FIXTURES = join(import.meta.dirname, 'fixtures', 'feeds')
const dir = mkdtempSync(join(tmpdir(), 'verdict-cli-feeds-'))
const env = { VERDICT_FEEDS_DIR: join(dir, 'feeds'), DATABASE_URL: join(dir, 'verdict.db') }
let server: Server
let base = ''

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/torbulkexitlist') res.end(readFileSync(join(FIXTURES, 'tor-bulk-exit-list.txt')))
    else if (req.url === '/tor-two') res.end('185.220.101.1\n185.220.101.2\n')
    else {
      res.statusCode = 500
      res.end('upstream broken')
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const addr = server.address()
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
})
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()))
  rmSync(dir, { recursive: true, force: true })
})

describe('verdict feeds', () => {
  it('imports a feed file with progress on stderr and one JSON result on stdout', () => {
    const r = runCli(['feeds', 'import', 'relay', join(FIXTURES, 'egress-ip-ranges.csv')], env)
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.result).toMatchObject({ name: 'relay', status: 'updated', entries: 5 })
    expect(r.stderr).toContain('relay')
    const bad = runCli(['feeds', 'import', 'nope', 'x'], env)
    expect(bad.status).toBe(2)
    expect(bad.stdout).toBe('')
  })

  it('updates from the configured URLs, keeping old data when a download fails', async () => {
    const r = await runCliAsync(['feeds', 'update', '--only', 'tor,proxy'], {
      ...env,
      VERDICT_FEED_TOR_URL: `${base}/torbulkexitlist`,
      VERDICT_FEED_PROXY_URL: `${base}/broken`,
    })
    const out = JSON.parse(r.stdout)
    const byName = Object.fromEntries(out.results.map((x: { name: string }) => [x.name, x]))
    expect(byName.tor).toMatchObject({ status: 'updated', entries: 5 })
    expect(byName.proxy.status).toBe('failed')
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/tor/)
  })

  it('refuses a refresh or import that shrinks a feed by more than half unless --force', async () => {
    const urlEnv = { ...env, VERDICT_FEED_TOR_URL: `${base}/tor-two` }
    const refused = await runCliAsync(['feeds', 'update', '--only', 'tor'], urlEnv)
    expect(refused.status).toBe(1)
    expect(JSON.parse(refused.stdout).results[0]).toMatchObject({ name: 'tor', status: 'failed', entries: 5 })
    expect(refused.stderr).toMatch(/from 5 to 2 entries.*--force/)
    const small = join(dir, 'two-relays.csv')
    writeFileSync(small, '172.224.226.0/27,GB,GB-EN,London,\n')
    const importRefused = runCli(['feeds', 'import', 'relay', small], env)
    expect(importRefused.status).toBe(1)
    expect(importRefused.stdout).toBe('')
    expect(importRefused.stderr).toMatch(/"error":".*from 5 to 1 entries/)
    const forced = await runCliAsync(['feeds', 'update', '--only', 'tor', '--force'], urlEnv)
    expect(forced.status).toBe(0)
    expect(JSON.parse(forced.stdout).results[0]).toMatchObject({ status: 'updated', entries: 2 })
    expect(runCli(['feeds', 'import', 'relay', small, '--force'], env).status).toBe(0)
    // Back to the full fixtures for the status test below.
    expect(
      (
        await runCliAsync(['feeds', 'update', '--only', 'tor'], {
          ...env,
          VERDICT_FEED_TOR_URL: `${base}/torbulkexitlist`,
        })
      ).status,
    ).toBe(0)
    expect(runCli(['feeds', 'import', 'relay', join(FIXTURES, 'egress-ip-ranges.csv')], env).status).toBe(0)
  })

  it('status lists every data source with its size and load state', () => {
    const r = runCli(['feeds', 'status'], env)
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    const sources = Object.fromEntries(out.sources.map((s: { name: string }) => [s.name, s]))
    expect(sources.tor).toMatchObject({ loaded: true, entries: 5 })
    expect(sources.relay).toMatchObject({ loaded: true })
    expect(sources.vpn).toMatchObject({ loaded: false })
    expect(sources['geo-city'].attribution).toContain('DB-IP')
    expect(sources['disposable-email (merged)'].entries).toBeGreaterThanOrEqual(160_000)
    expect(out.feeds.find((f: { name: string }) => f.name === 'tor').present).toBe(true)
  })
})
