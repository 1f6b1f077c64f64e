import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSettings } from '../../../src/config/settings.js'
import { loadFeeds } from '../../../src/intel/feeds/load.js'
import { readFeedMeta } from '../../../src/intel/feeds/store.js'
import { feedStatus, importFeed, updateFeeds } from '../../../src/intel/feeds/update.js'
import { parseIp } from '../../../src/intel/ip/normalize.js'

const FIXTURES = join(import.meta.dirname, '../../fixtures/feeds')
const ip = (text: string) => parseIp(text)!

/** Serves the fixture files over real HTTP on 127.0.0.1; /fail/* answers 500, /html/* an HTML page. */
function startServer(): Promise<{ server: Server; base: string; hits: string[] }> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    const path = req.url ?? '/'
    hits.push(path)
    if (path.startsWith('/fail/')) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error')
      return
    }
    if (path.startsWith('/html/')) {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html>\n<body>\n<h1>Maintenance</h1>\n</body>\n</html>\n')
      return
    }
    try {
      const body = readFileSync(join(FIXTURES, path.replace(/^\/+/, '')))
      res.writeHead(200, { 'content-type': 'text/plain' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      resolve({ server, base: `http://127.0.0.1:${port}`, hits })
    })
  })
}

describe('updateFeeds against a loopback HTTP server', () => {
  let server: Server
  let base: string
  let hits: string[]
  let dir: string

  beforeAll(async () => {
    ;({ server, base, hits } = await startServer())
    dir = await mkdtemp(join(tmpdir(), 'verdict-feeds-'))
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  /** A directory of its own holding one feed downloaded successfully: the "previous data" a test keeps. */
  const storedFeed = async (name: 'tor' | 'relay' | 'datacenter', url: string) => {
    const own = await mkdtemp(join(tmpdir(), `verdict-feeds-${name}-`))
    const [first] = await updateFeeds({ dir: own, names: [name], urls: { [name]: url } })
    expect(first?.status).toBe('updated')
    return own
  }

  it('downloads, validates and stores every feed that has a URL', async () => {
    const lines: string[] = []
    const results = await updateFeeds({
      dir,
      progress: (l) => lines.push(l),
      urls: {
        tor: `${base}/tor-bulk-exit-list.txt`,
        relay: `${base}/egress-ip-ranges.csv`,
        vpn: [`${base}/vpn-x4b-ipv4.txt`, `${base}/vpn-operators.csv`],
        'vpn-asn': `${base}/vpn-asn.txt`,
        proxy: `${base}/firehol_proxies.netset`,
        datacenter: `${base}/datacenter-x4b-ipv4.txt ${base}/aws-ip-ranges.json ${base}/google-cloud.json`,
      },
    })
    const byName = Object.fromEntries(results.map((r) => [r.name, r]))
    expect(byName.tor).toMatchObject({ status: 'updated', entries: 5, malformed: 1 })
    expect(byName.relay).toMatchObject({ status: 'updated', entries: 5, malformed: 1 })
    // The two VPN sources overlap on two /24s; one is unnamed, the other names the operator.
    expect(byName.vpn).toMatchObject({ status: 'updated', entries: 10, malformed: 1 })
    expect(byName['vpn-asn']).toMatchObject({ status: 'updated', entries: 3 })
    expect(byName.proxy).toMatchObject({ status: 'updated', entries: 6, malformed: 0 })
    expect(byName.datacenter).toMatchObject({ status: 'updated', entries: 9, malformed: 1 })
    expect(byName['proxy-asn']).toMatchObject({ status: 'skipped', entries: 0 })
    expect(lines).toContain('proxy-asn: no URL configured (set VERDICT_FEED_PROXY_ASN_URL), skipped')
    expect(lines).toContain(`tor: downloading ${base}/tor-bulk-exit-list.txt`)
    expect(lines.some((l) => l.startsWith('tor: stored 5 entries (1 malformed lines skipped'))).toBe(true)
    expect(hits).toContain('/google-cloud.json')

    const meta = await readFeedMeta(dir, 'datacenter')
    expect(meta).toMatchObject({ name: 'datacenter', entries: 9, malformed: 1 })
    expect(meta?.source).toBe(
      `${base}/datacenter-x4b-ipv4.txt ${base}/aws-ip-ranges.json ${base}/google-cloud.json`,
    )
    expect(Math.abs(Date.now() - (meta?.fetchedAt ?? 0))).toBeLessThan(60_000)

    const feeds = await loadFeeds(dir)
    expect(feeds.tor?.ranges?.has(ip('185.220.101.33'))).toBe(true)
    expect(feeds.tor?.ranges?.has(ip('185.220.101.34'))).toBe(false)
    expect(feeds.relay?.ranges?.has(ip('2a02:26f7:b3c0:4000::abcd'))).toBe(true)
    expect(feeds.vpn?.ranges?.match(ip('185.65.134.9'))).toBe('Mullvad VPN')
    expect(feeds.vpn?.ranges?.match(ip('45.83.220.69'))).toBeNull()
    expect(feeds['vpn-asn']?.asns?.get(39351)).toBe('Mullvad VPN')
    expect(feeds.datacenter?.ranges?.match(ip('34.1.210.1'))).toBe('Google Cloud')
    expect(feeds['proxy-asn']).toBeUndefined()
    // Nothing half-written or temporary is left behind.
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('keeps the previous data when a download answers 500', async () => {
    const dir = await storedFeed('tor', `${base}/tor-bulk-exit-list.txt`)
    const before = await readFile(join(dir, 'tor.txt'), 'utf8')
    const metaBefore = await readFeedMeta(dir, 'tor')
    const lines: string[] = []
    const [result] = await updateFeeds({
      dir,
      names: ['tor'],
      urls: { tor: `${base}/fail/torbulkexitlist` },
      progress: (l) => lines.push(l),
    })
    expect(result).toMatchObject({ name: 'tor', status: 'failed', entries: 5 })
    expect(result?.error).toContain('HTTP 500')
    expect(lines.at(-1)).toMatch(/^tor: update failed: HTTP 500 .*; keeping previous data \(5 entries from /)
    expect(await readFile(join(dir, 'tor.txt'), 'utf8')).toBe(before)
    expect(await readFeedMeta(dir, 'tor')).toEqual(metaBefore)
    const feeds = await loadFeeds(dir)
    expect(feeds.tor?.ranges?.has(ip('192.42.116.16'))).toBe(true)
  })

  it('keeps the previous data when one of several URLs fails', async () => {
    const dir = await storedFeed(
      'datacenter',
      `${base}/datacenter-x4b-ipv4.txt ${base}/aws-ip-ranges.json ${base}/google-cloud.json`,
    )
    const before = await readFile(join(dir, 'datacenter.txt'), 'utf8')
    const [result] = await updateFeeds({
      dir,
      names: ['datacenter'],
      urls: { datacenter: [`${base}/datacenter-x4b-ipv4.txt`, `${base}/fail/ip-ranges.json`] },
    })
    expect(result?.status).toBe('failed')
    expect(await readFile(join(dir, 'datacenter.txt'), 'utf8')).toBe(before)
  })

  it('rejects a 200 answer that holds no valid entries (an HTML error page)', async () => {
    const dir = await storedFeed('relay', `${base}/egress-ip-ranges.csv`)
    const before = await readFile(join(dir, 'relay.txt'), 'utf8')
    const [result] = await updateFeeds({
      dir,
      names: ['relay'],
      urls: { relay: `${base}/html/egress-ip-ranges.csv` },
    })
    expect(result?.status).toBe('failed')
    expect(result?.error).toMatch(/no valid entries/)
    expect(await readFile(join(dir, 'relay.txt'), 'utf8')).toBe(before)
  })

  it('reports a failure without previous data', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'verdict-feeds-empty-'))
    const lines: string[] = []
    const [result] = await updateFeeds({
      dir: empty,
      names: ['proxy'],
      urls: { proxy: `${base}/missing.netset` },
      progress: (l) => lines.push(l),
    })
    expect(result).toMatchObject({ status: 'failed', entries: 0, source: null })
    expect(lines.at(-1)).toMatch(/HTTP 404 .*; no previous data$/)
    expect(readdirSync(empty)).toEqual([])
  })

  it('uses VERDICT_FEED_<NAME>_URL through the settings', async () => {
    const envDir = await mkdtemp(join(tmpdir(), 'verdict-feeds-env-'))
    const env = Object.fromEntries(
      ['TOR', 'RELAY', 'VPN', 'VPN_ASN', 'PROXY', 'PROXY_ASN', 'DATACENTER'].map((n) => [
        `VERDICT_FEED_${n}_URL`,
        '',
      ]),
    )
    env.VERDICT_FEED_PROXY_ASN_URL = `${base}/proxy-asn.txt`
    const results = await updateFeeds({ dir: envDir, urls: loadSettings(env).feeds.urls })
    expect(results.filter((r) => r.status === 'updated').map((r) => r.name)).toEqual(['proxy-asn'])
    expect(results.filter((r) => r.status === 'skipped')).toHaveLength(6)
  })
})

describe('importFeed and feedStatus', () => {
  it('imports a local file, reports it and replaces it on a later import', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-import-'))
    const lines: string[] = []
    const result = await importFeed('relay', join(FIXTURES, 'egress-ip-ranges.csv'), {
      dir,
      progress: (l) => lines.push(l),
    })
    expect(result).toMatchObject({ name: 'relay', status: 'updated', entries: 5, malformed: 1 })
    expect(lines[0]).toMatch(/^relay: importing .*egress-ip-ranges\.csv$/)

    const env = { VERDICT_FEED_TOR_URL: 'http://127.0.0.1:9/tor' }
    const status = await feedStatus(dir, loadSettings(env).feeds.urls)
    const relay = status.find((s) => s.name === 'relay')
    expect(relay).toMatchObject({ present: true, entries: 5, malformed: 1 })
    expect(relay?.source).toMatch(/^file:.*egress-ip-ranges\.csv$/)
    expect(typeof relay?.fetchedAt).toBe('number')
    expect(status.find((s) => s.name === 'tor')).toMatchObject({
      present: false,
      entries: 0,
      urls: ['http://127.0.0.1:9/tor'],
    })
    expect(status.map((s) => s.name)).toEqual([
      'tor',
      'relay',
      'vpn',
      'vpn-asn',
      'proxy',
      'proxy-asn',
      'datacenter',
    ])

    const smaller = join(dir, 'smaller.csv')
    await writeFile(smaller, '172.224.226.0/27,GB,GB-EN,London,\n')
    // From 5 entries to 1 is refused unless forced.
    await expect(importFeed('relay', smaller, { dir })).rejects.toThrow(
      /shrink the feed from 5 to 1 entries \(more than half\); run again with --force/,
    )
    expect((await loadFeeds(dir)).relay?.entries).toBe(5)
    await importFeed('relay', smaller, { dir, force: true })
    const feeds = await loadFeeds(dir)
    expect(feeds.relay?.entries).toBe(1)
    expect(feeds.relay?.ranges?.has(ip('104.28.37.41'))).toBe(false)
  })

  it('refuses unknown feeds, missing files and invalid content, keeping what is stored', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-import-bad-'))
    await importFeed('tor', join(FIXTURES, 'tor-bulk-exit-list.txt'), { dir })
    await expect(importFeed('tor-exits', join(FIXTURES, 'tor-bulk-exit-list.txt'), { dir })).rejects.toThrow(
      /unknown feed "tor-exits"/,
    )
    await expect(importFeed('tor', join(dir, 'nope.txt'), { dir })).rejects.toThrow(/ENOENT/)
    const junk = join(dir, 'junk.txt')
    await writeFile(junk, 'hello\nworld\n')
    await expect(importFeed('tor', junk, { dir })).rejects.toThrow(/rejected: no valid entries/)
    const mostlyBad = join(dir, 'mostly-bad.txt')
    await writeFile(mostlyBad, '1.2.3.4\nx\ny\n')
    await expect(importFeed('tor', mostlyBad, { dir })).rejects.toThrow(/mostly malformed/)
    expect((await loadFeeds(dir)).tor?.entries).toBe(5)
  })
})

describe('feed safety rules', () => {
  let server: Server
  let base: string
  const bodies = new Map<string, string>()

  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = bodies.get(req.url ?? '')
      if (body === undefined) res.writeHead(404).end()
      // No content-length: the size is only known while reading.
      else if (req.url?.startsWith('/chunked/')) {
        res.writeHead(200, { 'content-type': 'text/plain' })
        for (let i = 0; i < body.length; i += 1000) res.write(body.slice(i, i + 1000))
        res.end()
      } else res.writeHead(200, { 'content-type': 'text/plain' }).end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const proxies = (n: number, from = 0) =>
    `${Array.from({ length: n }, (_, i) => `198.51.${Math.floor((from + i) / 250)}.${(from + i) % 250}`).join('\n')}\n`

  it('skips default routes and implausibly broad ranges as malformed lines', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-broad-'))
    bodies.set(
      '/broad.txt',
      [
        '0.0.0.0/0',
        '::/0',
        '128.0.0.0/1',
        '10.0.0.0/7',
        '2000::/3',
        '2a00::/15',
        '3.0.0.0/8',
        '2a05:d000::/16',
        '203.0.113.0/24',
        '2001:db8::/48',
        '192.0.2.1',
        '198.51.100.0/24',
        '100.64.0.0/10',
      ].join('\n'),
    )
    const [r] = await updateFeeds({ dir, names: ['proxy'], urls: { proxy: `${base}/broad.txt` } })
    expect(r).toMatchObject({ status: 'updated', entries: 7, malformed: 6 })
    const feeds = await loadFeeds(dir)
    expect(feeds.proxy?.ranges?.has(ip('8.8.8.8'))).toBe(false)
    expect(feeds.proxy?.ranges?.has(ip('2606:4700::1'))).toBe(false)
    expect(feeds.proxy?.ranges?.has(ip('3.1.2.3'))).toBe(true)
    // A feed made only of default routes is rejected outright.
    bodies.set('/only-default.txt', '0.0.0.0/0\n::/0\n')
    const [bad] = await updateFeeds({ dir, names: ['proxy'], urls: { proxy: `${base}/only-default.txt` } })
    expect(bad).toMatchObject({ status: 'failed', entries: 7 })
    expect(bad?.error).toMatch(/no valid entries/)
  })

  it('caps the download size, with or without a content-length, keeping the previous data', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-cap-'))
    bodies.set('/small.txt', proxies(10))
    bodies.set('/big.txt', proxies(3000))
    bodies.set('/chunked/big.txt', proxies(3000))
    const first = await updateFeeds({
      dir,
      names: ['proxy'],
      urls: { proxy: `${base}/small.txt` },
      maxBytes: 20_000,
    })
    expect(first[0]).toMatchObject({ status: 'updated', entries: 10 })
    for (const path of ['/big.txt', '/chunked/big.txt']) {
      const lines: string[] = []
      const [r] = await updateFeeds({
        dir,
        names: ['proxy'],
        urls: { proxy: `${base}${path}` },
        maxBytes: 20_000,
        progress: (l) => lines.push(l),
      })
      expect(r, path).toMatchObject({ status: 'failed', entries: 10 })
      expect(r?.error).toMatch(/larger than 20000 bytes \(VERDICT_FEED_MAX_BYTES\)/)
      expect(lines.join('\n')).toContain('keeping previous data (10 entries')
    }
    // The cap the CLI passes comes from the environment.
    const [viaEnv] = await updateFeeds({
      dir,
      names: ['proxy'],
      urls: { proxy: `${base}/big.txt` },
      maxBytes: loadSettings({ VERDICT_FEED_MAX_BYTES: '20000' }).feeds.maxBytes,
    })
    expect(viaEnv?.error).toMatch(/larger than 20000 bytes/)
    const [fits] = await updateFeeds({ dir, names: ['proxy'], urls: { proxy: `${base}/big.txt` } })
    expect(fits).toMatchObject({ status: 'updated', entries: 3000 })
    expect(() => loadSettings({ VERDICT_FEED_MAX_BYTES: 'lots' })).toThrow(/VERDICT_FEED_MAX_BYTES/)
  })

  it('refuses a refresh that loses more than half of the entries unless forced', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-shrink-'))
    bodies.set('/ten.txt', proxies(10))
    bodies.set('/five.txt', proxies(5))
    bodies.set('/four.txt', proxies(4))
    const update = (path: string, force?: boolean) =>
      updateFeeds({ dir, names: ['proxy'], urls: { proxy: `${base}${path}` }, ...(force ? { force } : {}) })
    expect((await update('/ten.txt'))[0]).toMatchObject({ status: 'updated', entries: 10 })
    const [shrunk] = await update('/four.txt')
    expect(shrunk).toMatchObject({ status: 'failed', entries: 10 })
    expect(shrunk?.error).toMatch(/from 10 to 4 entries \(more than half\); run again with --force/)
    expect((await loadFeeds(dir)).proxy?.entries).toBe(10)
    // Exactly half is a normal refresh.
    expect((await update('/five.txt'))[0]).toMatchObject({ status: 'updated', entries: 5 })
    expect((await update('/ten.txt'))[0]).toMatchObject({ status: 'updated', entries: 10 })
    expect((await update('/four.txt', true))[0]).toMatchObject({ status: 'updated', entries: 4 })
  })
})
