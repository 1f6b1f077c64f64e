import { execFile } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { terminateTls } from '../../src/tls/capture.js'
import { JA4_PATTERN } from '../../src/tls/ja4.js'
import { knownTool } from '../../src/tls/known-tools.js'
import { collectIn } from '../beacon/pages.js'
import { browserAvailable, launchBrowser, openPage, type Site, startSite } from '../helpers/browser.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { testCertificate } from './tls-app.js'

/**
 * The whole JA4 path through verdict's own HTTPS listener (TLS_CERT_FILE/TLS_KEY_FILE, set up as
 * server.ts does it): a beacon from curl, Node's fetch and headless Chromium running the real beacon
 * script, then a score of that device_id. The tools' beacons give `forged_beacon`; Chromium's JA4 is
 * captured and gives nothing.
 */
const hasBrowser = browserAvailable()
const SHOP = 'https://shop.example'
const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

let cert: Awaited<ReturnType<typeof testCertificate>>
let h: Harness
let t: TestTenant
let pk: string
let base: string

beforeAll(async () => {
  cert = await testCertificate()
  h = await build()
  t = await h.tenant()
  terminateTls(h.app.server, cert.credentials)
  await h.app.listen({ host: '127.0.0.1', port: 0 })
  base = `https://localhost:${(h.app.server.address() as AddressInfo).port}`
}, 60_000)

afterAll(async () => {
  await h?.close()
  cert?.remove()
})

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file}: ${stderr || err.message}`))
      else resolve(stdout)
    })
  })
}

const body = (id: string) =>
  JSON.stringify({
    device_id: id,
    device: {
      ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
      antidetect_score: 0,
      antidetect_confidence: 'low',
    },
  })

/** What a script posing as the page sends: the page's key, Origin and a browser's user agent. */
const headers = () => ({
  'content-type': 'application/json',
  'x-api-key': pk,
  origin: SHOP,
  'user-agent': CHROME_MAC,
})

const NODE_FETCH = `
const [url, headers, body] = process.argv.slice(1)
const res = await fetch(url, { method: 'POST', headers: JSON.parse(headers), body })
console.log(res.status, await res.text())`

const CLIENTS = {
  curl: (id: string) =>
    run('curl', [
      '-sS',
      '--cacert',
      cert.certFile,
      ...Object.entries(headers()).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
      '--data',
      body(id),
      `${base}/v1/beacon`,
    ]),
  'node-fetch': (id: string) =>
    run(
      process.execPath,
      ['--input-type=module', '-e', NODE_FETCH, `${base}/v1/beacon`, JSON.stringify(headers()), body(id)],
      { NODE_EXTRA_CA_CERTS: cert.certFile },
    ),
}

async function score(id: string) {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/score',
    headers: t.headers,
    // The beacons came over loopback: the score names that address, as a shop forwards its visitor's.
    payload: { event: 'signup', user_id: `u-${id.slice(0, 8)}`, device_id: id, ip: '127.0.0.1' },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as {
    reasons: string[]
    verdict: string
    checks: { reason: string; weight: number; evidence: Record<string, unknown> }[]
    device: { ja4: boolean; ja4_known_tool: string | null }
  }
}

describe('JA4 of beacons over HTTPS, through to the score', () => {
  it('curl and Node fetch posing as the page: ja4_known_tool is set and forged_beacon fires', async () => {
    pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
    for (const [tool, send] of Object.entries(CLIENTS)) {
      const id = tool === 'curl' ? 'c'.repeat(64) : 'd'.repeat(64)
      const out = await send(id)
      expect(out, tool).toContain('vis_')
      const seen = await h.store.beacons.latest(t.tenantId, id, 0)
      expect(seen?.ja4, tool).toMatch(JA4_PATTERN)
      expect(knownTool(seen?.ja4), `${tool} ${seen?.ja4}: re-measure with node scripts/measure-ja4.mjs`).toBe(
        tool,
      )
      const r = await score(id)
      expect(r.device).toEqual(expect.objectContaining({ ja4: true, ja4_known_tool: tool }))
      expect(r.checks.find((c) => c.reason === 'forged_beacon')).toMatchObject({
        weight: 45,
        evidence: { tool, ja4: seen?.ja4 },
      })
      expect(r.verdict).toBe('review')
    }
  }, 60_000)

  describe.skipIf(!hasBrowser)('headless Chromium running the beacon script', () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({
        '/': `<!doctype html><html><head><meta charset="utf-8"><script src="${base}/v1/beacon.js"></script></head><body><p>shop</p></body></html>`,
      })
    })
    afterAll(async () => {
      await site?.close()
    })

    it('captures its JA4, which is no known tool: no forged_beacon', async () => {
      const key = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [site.origin] } }))
        .apiKey
      const browser = await launchBrowser()
      try {
        const { page } = await openPage(browser, site.url('/'), { ignoreHTTPSErrors: true })
        const { r } = await collectIn(page, key)
        const seen = await h.store.beacons.latest(t.tenantId, r.device_id, 0)
        expect(seen?.ja4).toMatch(/^t13d\d{4}h2_/)
        expect(knownTool(seen?.ja4)).toBeNull()
        console.log(`headless Chromium beacon JA4 over HTTPS: ${seen?.ja4}`)
        const s = await score(r.device_id)
        expect(s.device).toEqual(expect.objectContaining({ ja4: true, ja4_known_tool: null }))
        expect(s.reasons).not.toContain('forged_beacon')
        expect(s.reasons).not.toContain('known_spoof_signature')
      } finally {
        await browser.close()
      }
    }, 60_000)
  })
})
