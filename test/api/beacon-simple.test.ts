import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

// The library's form of POST /v1/beacon: a CORS simple request, text/plain body with the key inside.
const SHOP = 'https://shop.example'
const TEXT = 'text/plain;charset=UTF-8'
const DEVICE_ID = 'cd'.repeat(32)

const device = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
  antidetect_score: 0,
  antidetect_confidence: 'low',
})

let h: Harness
let t: TestTenant
let pk: string

beforeAll(async () => {
  // A small body limit, to show it holds for text/plain too.
  h = await build({ bodyLimitBytes: 2048 })
  t = await h.tenant()
  pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
})

afterAll(async () => {
  await h.close()
})

let n = 0
const send = (body: string, headers: Record<string, string> = {}, url = '/v1/beacon') =>
  h.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': TEXT, origin: SHOP, ...headers },
    payload: body,
    // One address per request: the failed-key throttle of one test must not reach the next.
    remoteAddress: `73.20.${++n}.1`,
  })

const beacon = (fields: Record<string, unknown>) =>
  JSON.stringify({ key: pk, device_id: DEVICE_ID, device: device(), ...fields })

describe('POST /v1/beacon, text/plain with the key in the body', () => {
  it('records the beacon from an allowed origin and lets the page read the answer', async () => {
    const res = await send(beacon({}))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ device_id: DEVICE_ID, visit_id: expect.stringMatching(/^vis_/) })
    expect(res.headers['access-control-allow-origin']).toBe(SHOP)
    expect(res.headers['ratelimit-limit']).toBeDefined()
    const obs = await h.store.beacons.latest(t.tenantId, DEVICE_ID, 0)
    expect(obs?.visitId).toBe(res.json().visit_id)
    // The key is a credential, not data: it is stored nowhere with the beacon.
    const rows = await h.store.db.all<Record<string, unknown>>('SELECT * FROM beacon_observations')
    expect(JSON.stringify(rows)).not.toContain(pk)
  })

  it('answers 403 from an origin the key does not list, or without Origin', async () => {
    const res = await send(beacon({}), { origin: 'https://evil.example' })
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('forbidden')
    expect(res.headers['access-control-allow-origin']).toBe('https://evil.example')
    const none = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'content-type': TEXT },
      payload: beacon({}),
    })
    expect(none.statusCode).toBe(403)
  })

  it('answers 401 for an unknown, missing or secret key in the body', async () => {
    for (const key of ['pk_notarealkeyatall000000000000000000000000', undefined, '', t.apiKey]) {
      const res = await send(beacon({ key }))
      expect(res.statusCode, String(key)).toBe(401)
      expect(res.json().code).toBe('unauthorized')
      expect(res.headers['access-control-allow-origin']).toBe(SHOP)
    }
    expect((await send(beacon({ key: undefined }))).json().error).toContain('`key` in the beacon body')
    expect((await send(beacon({ key: 42 }))).statusCode).toBe(401)
  })

  it('answers 400 with a clear error for a body that is not a valid JSON object', async () => {
    for (const [body, error] of [
      ['{"key": "pk_', 'body is not valid JSON'],
      ['not json', 'body is not valid JSON'],
      ['', 'body is empty; send a JSON object'],
      [`{"key":"${pk}","key":"${pk}"}`, 'body.key is sent more than once'],
    ] as const) {
      const res = await send(body)
      expect(res.statusCode, body).toBe(400)
      expect(res.json(), body).toMatchObject({ error, code: 'bad_request' })
      expect(res.headers['access-control-allow-origin']).toBe(SHOP)
    }
    // Validated like the JSON form once the key is known: unknown fields are refused, naming them.
    const extra = await send(beacon({ canvas: 'raw' }))
    expect(extra.statusCode).toBe(400)
    expect(extra.json().error).toContain('canvas')
  })

  it('keeps the body limit (413)', async () => {
    const res = await send(beacon({ device_id: 'x'.repeat(4000) }))
    expect(res.statusCode).toBe(413)
    expect(res.json().code).toBe('payload_too_large')
  })

  it('still takes the preflighted form: application/json with the key in x-api-key', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'x-api-key': pk, origin: SHOP },
      payload: { device_id: DEVICE_ID, device: device() },
    })
    expect(res.statusCode, res.body).toBe(200)
  })

  it('reads text/plain on the beacon only; a pk key in a body authenticates nothing else', async () => {
    const config = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: { ...t.headers, 'content-type': TEXT },
      payload: '{}',
    })
    expect(config.statusCode).toBe(415)
    const score = await send(JSON.stringify({ key: pk, event: 'signup' }), {}, '/v1/score')
    expect(score.statusCode).toBe(401)
    const json = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: { origin: SHOP },
      payload: { key: pk, event: 'signup' },
    })
    expect(json.statusCode).toBe(401)
  })
})
