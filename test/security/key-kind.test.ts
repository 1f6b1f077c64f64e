import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { AUTH_FAILURES_PER_MINUTE } from '../../src/services/access/auth-throttle.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

/**
 * Issue 26, item 8: a key of the wrong kind (a publishable key on a secret-key route, a secret key on
 * the beacon) is a failed attempt: it counts toward the address's failed-attempt throttle, and a key
 * that only ever authenticated on the wrong route is not remembered as good.
 */
let h: Harness
let t: TestTenant
let pk: string

beforeAll(async () => {
  h = await build()
  t = await h.tenant({ rateLimit: 100_000 })
  pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: ['https://shop.example'] } }))
    .apiKey
})
afterAll(async () => {
  await h.close()
})

const beacon = (headers: Record<string, string>, remoteAddress: string) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/beacon',
    remoteAddress,
    headers: { origin: 'https://shop.example', ...headers },
    payload: {
      device_id: 'a'.repeat(64),
      device: {
        ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, false])),
        antidetect_score: 0,
        antidetect_confidence: 'low',
      },
    },
  })

describe('a key of the wrong kind', () => {
  it('a publishable key on a secret-key route is throttled like a wrong key', async () => {
    // The page key works where it belongs first: a public key proves nothing, it earns no pass.
    expect((await beacon({ 'x-api-key': pk }, '203.0.113.20')).statusCode).toBe(200)
    const codes: number[] = []
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE + 10; i++) {
      const res = await h.app.inject({
        method: 'GET',
        url: '/v1/config',
        remoteAddress: '203.0.113.20',
        headers: { 'x-api-key': pk },
      })
      codes.push(res.statusCode)
    }
    expect(codes.slice(0, AUTH_FAILURES_PER_MINUTE).every((c) => c === 401)).toBe(true)
    expect(codes.slice(AUTH_FAILURES_PER_MINUTE).every((c) => c === 429)).toBe(true)
  })

  it('a secret key on the beacon counts too', async () => {
    const ip = '203.0.113.21'
    // The tenant's key has worked from this address: it keeps working past the bound (AuthThrottle).
    expect(
      (await h.app.inject({ method: 'GET', url: '/v1/config', remoteAddress: ip, headers: t.headers }))
        .statusCode,
    ).toBe(200)
    const other = (await issueKey(h.store, h.clock, t.tenantId)).apiKey
    const codes: number[] = []
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE + 5; i++)
      codes.push((await beacon({ 'x-api-key': other }, ip)).statusCode)
    expect(codes.slice(0, AUTH_FAILURES_PER_MINUTE).every((c) => c === 401)).toBe(true)
    expect(codes.at(-1)).toBe(429)
    const own = await h.app.inject({
      method: 'GET',
      url: '/v1/config',
      remoteAddress: ip,
      headers: t.headers,
    })
    expect(own.statusCode, own.body).toBe(200)
  })
})
