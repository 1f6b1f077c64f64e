import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { build, type Harness, TEST_SECRET, type TestTenant } from '../helpers/build.js'
import { runCli } from '../helpers/processes.js'

const SHOP = 'https://shop.example'
const DEVICE_ID = 'ab'.repeat(32)
const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

const device = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
  is_headless: true,
  antidetect_score: 40,
  antidetect_confidence: 'medium',
})

let h: Harness
let t: TestTenant
let pk: string
let pkKeyId: string

beforeAll(async () => {
  h = await build()
  t = await h.tenant()
  // The key comes from the real CLI, over the harness's own database file.
  const r = runCli(
    ['keys', 'create', '--tenant', t.tenantId, '--publishable', '--origin', `${SHOP},http://127.0.0.1:8080`],
    { DATABASE_URL: `sqlite:${join(h.dir, 'verdict.db')}`, VERDICT_SECRET: TEST_SECRET },
  )
  expect(r.status, r.stderr).toBe(0)
  const out = JSON.parse(r.stdout) as { apiKey: string; keyId: string }
  pk = out.apiKey
  pkKeyId = out.keyId
})

afterAll(async () => {
  await h.close()
})

const beacon = (
  headers: Record<string, string>,
  payload: unknown = { device_id: DEVICE_ID, device: device() },
) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/beacon',
    headers: { 'x-api-key': pk, origin: SHOP, 'user-agent': CHROME_MAC, ...headers },
    payload: payload as object,
    remoteAddress: '73.162.10.20',
  })

describe('publishable keys', () => {
  it('keys create --publishable prints a pk_ key; --publishable without --origin is a usage error', async () => {
    expect(pk).toMatch(/^pk_[A-Za-z0-9]{40}$/)
    const rec = await h.store.tenants.getKey(pkKeyId)
    expect(rec?.kind).toBe('publishable')
    expect(rec?.origins).toEqual([SHOP, 'http://127.0.0.1:8080'])
    const env = { DATABASE_URL: `sqlite:${join(h.dir, 'verdict.db')}`, VERDICT_SECRET: TEST_SECRET }
    const bad = runCli(['keys', 'create', '--tenant', t.tenantId, '--publishable'], env)
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain('--origin')
    const path = runCli(
      ['keys', 'create', '--tenant', t.tenantId, '--publishable', '--origin', 'https://shop.example/x'],
      env,
    )
    expect(path.status).not.toBe(0)
  })

  it('answers 401 with a pk key on every other keyed or optional route', async () => {
    const others = h.app.routeTable.filter((r) => r.auth === 'key' || r.auth === 'optional')
    expect(others.length).toBeGreaterThan(5)
    for (const [i, r] of others.entries()) {
      const res = await h.app.inject({
        method: r.method as 'GET',
        url: r.url.replace(/:[A-Za-z]+/g, 'x'),
        headers: { 'x-api-key': pk },
        remoteAddress: `10.88.${i}.1`,
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { payload: {} }),
      })
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401)
      expect(res.json().code).toBe('unauthorized')
    }
    const score = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: { 'x-api-key': pk },
      payload: { event: 'signup', ip: '73.162.10.20' },
    })
    expect(score.statusCode).toBe(401)
    expect(score.json().error).toContain('pk_')
  })

  it('answers 401 on the beacon with a secret key or no key', async () => {
    expect((await beacon({ 'x-api-key': t.apiKey })).statusCode).toBe(401)
    const none = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { origin: SHOP },
      payload: { device_id: DEVICE_ID, device: device() },
    })
    expect(none.statusCode).toBe(401)
    // Even the refusal is readable by the page.
    expect(none.headers['access-control-allow-origin']).toBe(SHOP)
  })
})

describe('POST /v1/beacon', () => {
  it('records the beacon from an allowed origin and answers {device_id, visit_id} with CORS', async () => {
    const res = await beacon({})
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['device_id', 'visit_id'])
    expect(body.device_id).toBe(DEVICE_ID)
    expect(body.visit_id).toMatch(/^vis_/)
    expect(res.headers['access-control-allow-origin']).toBe(SHOP)
    expect(res.headers['ratelimit-limit']).toBeDefined()

    const obs = await h.store.beacons.latest(t.tenantId, DEVICE_ID, 0)
    expect(obs).toMatchObject({ visitId: body.visit_id, os: 'macOS', browser: 'Chrome', mobile: false })
    expect(obs?.flags).toMatchObject({ is_headless: true, ua_consistent: true, antidetect_score: 40 })
    expect(obs?.ipHash).toBe(h.hasher.entity('ip', '73.162.10.20'))
    // The raw address is nowhere in the row.
    const rows = await h.store.db.all<Record<string, unknown>>('SELECT * FROM beacon_observations')
    expect(JSON.stringify(rows)).not.toContain('73.162.10.20')
    // Another tenant sees nothing of it.
    const other = await h.tenant()
    expect(await h.store.beacons.latest(other.tenantId, DEVICE_ID, 0)).toBeUndefined()
  })

  it('parses a phone user agent as mobile; each visit gets a new visit_id', async () => {
    const id = '9a'.repeat(32)
    const a = await beacon({ 'user-agent': SAFARI_IPHONE }, { device_id: id, device: device() })
    h.clock.advance(1000)
    const b = await beacon({ 'user-agent': SAFARI_IPHONE }, { device_id: id, device: device() })
    expect(a.json().visit_id).not.toBe(b.json().visit_id)
    const obs = await h.store.beacons.latest(t.tenantId, id, 0)
    expect(obs).toMatchObject({ visitId: b.json().visit_id, os: 'iOS', browser: 'Safari', mobile: true })
  })

  it('answers 403 from an origin the key does not list, or without Origin', async () => {
    const res = await beacon({ origin: 'https://evil.example' })
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('forbidden')
    expect(res.headers['access-control-allow-origin']).toBe('https://evil.example')
    const sub = await beacon({ origin: 'https://www.shop.example' })
    expect(sub.statusCode).toBe(403)
    const noOrigin = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'x-api-key': pk },
      payload: { device_id: DEVICE_ID, device: device() },
    })
    expect(noOrigin.statusCode).toBe(403)
  })

  it('validates the body against the contract (400 naming the field), unknown fields included', async () => {
    const cases: [unknown, string][] = [
      [{ device_id: 'not-a-hash', device: device() }, 'device_id'],
      [{ device_id: DEVICE_ID }, 'device'],
      [{ device_id: DEVICE_ID, device: { ...device(), is_tampered: 'yes' } }, 'is_tampered'],
      [{ device_id: DEVICE_ID, device: { ...device(), antidetect_score: 101 } }, 'antidetect_score'],
      [{ device_id: DEVICE_ID, device: device(), canvas: 'raw' }, 'canvas'],
    ]
    for (const [payload, field] of cases) {
      const res = await beacon({}, payload)
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.json().error, JSON.stringify(payload)).toContain(field)
    }
  })

  it('answers the CORS preflight without a key', async () => {
    const res = await h.app.inject({
      method: 'OPTIONS',
      url: '/v1/beacon',
      headers: {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-api-key',
      },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(SHOP)
    expect(res.headers['access-control-allow-methods']).toBe('POST')
    expect(String(res.headers['access-control-allow-headers'])).toContain('x-api-key')
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0)
  })

  it('limits beacons per client IP as well as per key', async () => {
    const lim = await build({ keylessRateLimit: 3 })
    try {
      const tt = await lim.tenant()
      const { issueKey } = await import('../../src/services/access/tenants.js')
      const key = await issueKey(lim.store, lim.clock, tt.tenantId, { publishable: { origins: [SHOP] } })
      const send = (ip: string) =>
        lim.app.inject({
          method: 'POST',
          url: '/v1/beacon',
          headers: { 'x-api-key': key.apiKey, origin: SHOP },
          payload: { device_id: DEVICE_ID, device: device() },
          remoteAddress: ip,
        })
      for (let i = 0; i < 3; i++) expect((await send('73.1.1.1')).statusCode).toBe(200)
      const limited = await send('73.1.1.1')
      expect(limited.statusCode).toBe(429)
      expect(limited.json().code).toBe('rate_limited')
      expect((await send('73.1.1.2')).statusCode).toBe(200)
    } finally {
      await lim.close()
    }
  })

  it('/v1/subject lists the beacons of a device_id or an IP, without the raw address', async () => {
    const id = '5c'.repeat(32)
    const sent = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'x-api-key': pk, origin: SHOP },
      payload: { device_id: id, device: device() },
      remoteAddress: '73.99.1.7',
    })
    expect(sent.statusCode).toBe(200)
    const visit = (sent.json() as { visit_id: string }).visit_id
    const subject = async (payload: object) => {
      const res = await h.app.inject({ method: 'POST', url: '/v1/subject', headers: t.headers, payload })
      expect(res.statusCode).toBe(200)
      return res.json() as { counts: { beacons: number }; beacons: { visitId: string; deviceId: string }[] }
    }
    for (const by of [{ device_id: id }, { ip: '73.99.1.7' }]) {
      const x = await subject(by)
      expect(x.counts.beacons).toBe(1)
      expect(x.beacons).toEqual([expect.objectContaining({ visitId: visit, deviceId: id, mobile: false })])
      expect(JSON.stringify(x.beacons)).not.toContain('73.99.1.7')
    }
    expect((await subject({ device_id: '0f1e'.repeat(16) })).counts.beacons).toBe(0)
  })

  it('/v1/forget erases the beacons of a device_id or an IP', async () => {
    const id = 'ef'.repeat(32)
    const send = (ip: string) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/beacon',
        headers: { 'x-api-key': pk, origin: SHOP },
        payload: { device_id: id, device: device() },
        remoteAddress: ip,
      })
    expect((await send('73.9.9.9')).statusCode).toBe(200)
    const count = async () =>
      (
        await h.store.db.all<{ n: number }>(
          'SELECT COUNT(*) AS n FROM beacon_observations WHERE tenant_id = ? AND device_id = ?',
          [t.tenantId, id],
        )
      )[0]!.n
    expect(Number(await count())).toBe(1)
    const forget = (payload: object) =>
      h.app.inject({ method: 'POST', url: '/v1/forget', headers: t.headers, payload })
    expect((await forget({ device_id: id })).statusCode).toBe(200)
    expect(Number(await count())).toBe(0)
    expect((await send('73.9.9.8')).statusCode).toBe(200)
    const byIp = await forget({ ip: '73.9.9.8' })
    expect(byIp.statusCode).toBe(200)
    expect(Number(await count())).toBe(0)
  })

  it('stays out of the OpenAPI document', async () => {
    const doc = (await h.app.inject({ url: '/v1/openapi.json' })).json()
    expect(Object.keys(doc.paths)).not.toContain('/v1/beacon')
  })
})

describe('POST /v1/score joins the latest beacon of its device_id', () => {
  const score = (payload: object, headers = t.headers) =>
    h.app.inject({ method: 'POST', url: '/v1/score', headers, payload })

  it('fills os, browser and mobile and counts the beacon flags the backend did not forward', async () => {
    const id = '12'.repeat(32)
    expect((await beacon({}, { device_id: id, device: device() })).statusCode).toBe(200)
    const res = await score({ event: 'signup', device_id: id, ip: '73.162.10.20' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.device).toMatchObject({ os: 'macOS', browser: 'Chrome', mobile: false, is_headless: true })
    expect(body.reasons).toContain('headless_browser')

    // Without a beacon for this device_id nothing is filled, and no flag appears from nowhere.
    const plain = await score({ event: 'signup', device_id: '34'.repeat(32), ip: '73.162.10.20' })
    expect(plain.json().device).toMatchObject({ os: null, browser: null, mobile: null, is_headless: null })
    expect(plain.json().reasons).not.toContain('headless_browser')
  })

  it("keeps the request's own flags, and a finding on either side counts", async () => {
    const id = '56'.repeat(32)
    await beacon({}, { device_id: id, device: { ...device(), is_headless: false } })
    const res = await score({
      event: 'login',
      device_id: id,
      ip: '73.162.10.20',
      device: { is_tampered: true, is_headless: false },
    })
    expect(res.json().device).toMatchObject({ is_tampered: true, is_headless: false, os: 'macOS' })
    expect(res.json().reasons).not.toContain('headless_browser')
    // The backend cannot clear what the browser reported.
    const id2 = '78'.repeat(32)
    await beacon({}, { device_id: id2, device: device() })
    const cleared = await score({
      event: 'login',
      device_id: id2,
      ip: '73.162.10.20',
      device: { is_headless: false },
    })
    expect(cleared.json().device.is_headless).toBe(true)
  })

  it("ignores beacons older than 30 minutes and other tenants' beacons", async () => {
    const id = '9a'.repeat(32)
    await beacon({}, { device_id: id, device: device() })
    const other = await h.tenant()
    const foreign = await score({ event: 'signup', device_id: id, ip: '73.162.10.20' }, other.headers)
    expect(foreign.json().device).toMatchObject({ os: null, is_headless: null })
    h.clock.advance(31 * 60_000)
    const late = await score({ event: 'signup', device_id: id, ip: '73.162.10.20' })
    expect(late.json().device).toMatchObject({ os: null, browser: null, mobile: null, is_headless: null })
  })
})

describe('GET /v1/beacon.js and .mjs', () => {
  const dist = join(import.meta.dirname, '..', '..', 'dist', 'beacon')
  const manifest = () => JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8')) as { version: string }

  it('serves both builds as JavaScript, long-cached on the current version, short otherwise', async () => {
    const { version } = manifest()
    for (const [url, file] of [
      ['/v1/beacon.js', 'verdict.js'],
      ['/v1/beacon.mjs', 'verdict.mjs'],
    ] as const) {
      const bare = await h.app.inject({ url })
      expect(bare.statusCode).toBe(200)
      expect(bare.headers['content-type']).toMatch(/^application\/javascript/)
      expect(bare.body).toBe(readFileSync(join(dist, file), 'utf8'))
      expect(bare.headers['cache-control']).toBe('public, max-age=300')
      expect(bare.headers['access-control-allow-origin']).toBe('*')
      const etag = String(bare.headers.etag)
      expect(etag).toContain(version)

      const pinned = await h.app.inject({ url: `${url}?v=${version}` })
      expect(pinned.statusCode).toBe(200)
      expect(pinned.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      const stale = await h.app.inject({ url: `${url}?v=0000000000000000` })
      expect(stale.headers['cache-control']).toBe('public, max-age=300')

      const again = await h.app.inject({ url, headers: { 'if-none-match': etag } })
      expect(again.statusCode).toBe(304)
      expect(again.body).toBe('')
    }
    // The two builds are told apart by their validators.
    const js = await h.app.inject({ url: '/v1/beacon.js' })
    const mjs = await h.app.inject({ url: '/v1/beacon.mjs' })
    expect(js.headers.etag).not.toBe(mjs.headers.etag)
  })

  it('needs no key and ignores a wrong one; stays out of the OpenAPI document', async () => {
    const res = await h.app.inject({ url: '/v1/beacon.js', headers: { 'x-api-key': 'wrong' } })
    expect(res.statusCode).toBe(200)
    const doc = (await h.app.inject({ url: '/v1/openapi.json' })).json()
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/beacon'))).toEqual([])
  })
})
