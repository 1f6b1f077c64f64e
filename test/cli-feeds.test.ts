import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
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
