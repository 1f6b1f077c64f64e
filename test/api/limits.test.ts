import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadSettings } from '../../src/config/settings.js'
import { contextFor } from '../../src/context.js'
import { ApiError } from '../../src/errors.js'
import { consumeQuota } from '../../src/services/access/quota.js'
import { eventually } from '../helpers/app.js'
import { build, type Harness } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'

let h: Harness
afterEach(async () => {
  await h.close()
})

describe('rate limit per API key', () => {
  it('sends RateLimit headers on every keyed response and 429 with Retry-After over the limit', async () => {
    h = await build()
    h.clock.set(Date.UTC(2026, 10, 22, 10, 0, 15))
    const t = await h.tenant({ rateLimit: 3 })
    for (let i = 0; i < 3; i++) {
      const res = await h.app.inject({ url: '/v1/config', headers: t.headers })
      expect(res.statusCode).toBe(200)
      expect(res.headers['ratelimit-limit']).toBe('3')
      expect(res.headers['ratelimit-remaining']).toBe(String(2 - i))
      // The budget refills one request every 20 s; Reset is when all of it is back.
      expect(res.headers['ratelimit-reset']).toBe(String(20 * (i + 1)))
    }
    // Validation failures count and carry the headers too.
    const bad = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { x: 1 },
    })
    expect(bad.statusCode).toBe(429)
    expect(bad.headers['retry-after']).toBe('20')
    expect(bad.headers['ratelimit-remaining']).toBe('0')
    expect(bad.json().error).toMatch(/rate limit/)
    // Another tenant's key has its own budget.
    const other = await h.tenant()
    expect((await h.app.inject({ url: '/v1/config', headers: other.headers })).statusCode).toBe(200)
    // Retry-After is honest: one request more once it has passed, not before.
    h.clock.advance(19_000)
    expect((await h.app.inject({ url: '/v1/config', headers: t.headers })).statusCode).toBe(429)
    h.clock.advance(1_000)
    const next = await h.app.inject({ url: '/v1/config', headers: t.headers })
    expect(next.statusCode).toBe(200)
    expect(next.headers['ratelimit-remaining']).toBe('0')
    // A full minute later the whole budget is back.
    h.clock.advance(60_000)
    const full = await h.app.inject({ url: '/v1/config', headers: t.headers })
    expect(full.headers['ratelimit-remaining']).toBe('2')
  })

  // A request arrives first but its key lookup answers last (a cold cache, a slow query): counted on
  // its arrival time, after nine arrived 1 ms later, it found the budget not quite refilled and one
  // of ten was refused; after ten, the budget a window ahead of its time read as a clock gone back and
  // started afresh, 11 allowed of 10 (the two-node test's flake).
  for (const [later, slowStatus] of [
    [9, 200],
    [10, 429],
  ] as const) {
    it(`counts a request at its turn, not its arrival: ${later} later then the slow one, which gets ${slowStatus}`, async () => {
      h = await build()
      h.clock.set(Date.UTC(2026, 10, 22, 10, 0, 15))
      const t = await h.tenant({ rateLimit: 10 })
      const tenants = h.store.tenants
      const find = tenants.findByKeyHash.bind(tenants)
      let release = () => {}
      const gate = new Promise<void>((r) => {
        release = r
      })
      const lookup = vi.spyOn(tenants, 'findByKeyHash').mockImplementationOnce(async (hash) => {
        await gate
        return find(hash)
      })
      const get = () => h.app.inject({ url: '/v1/lists', headers: t.headers })
      const slow = get()
      expect(await eventually(() => lookup.mock.calls.length === 1, 5000, 5)).toBe(true)
      h.clock.advance(1)
      const quick = await Promise.all(Array.from({ length: later }, get))
      expect(quick.map((r) => r.statusCode)).toEqual(Array(later).fill(200))
      release()
      expect((await slow).statusCode).toBe(slowStatus)
      expect((await get()).statusCode).toBe(429)
      lookup.mockRestore()
    })
  }

  it('defaults to 240 requests per minute', async () => {
    h = await build()
    const t = await h.tenant()
    let last = 0
    for (let i = 0; i < 241; i++)
      last = (await h.app.inject({ url: '/v1/lists', headers: t.headers })).statusCode
    expect(last).toBe(429)
  })

  it('limits keyless callers by the documented default when the app is given no limit', async () => {
    h = await build()
    const res = await h.app.inject({ url: '/v1/ip', remoteAddress: '198.51.100.9' })
    expect(res.headers['ratelimit-limit']).toBe('60')
    expect(loadSettings({}).keylessRateLimit).toBe(60)
  })

  it('limits keyless callers per client IP', async () => {
    h = await build({ keylessRateLimit: 2 })
    const from = (ip: string) => h.app.inject({ url: '/v1/ip', remoteAddress: ip })
    expect((await from('198.51.100.1')).statusCode).toBe(200)
    expect((await from('198.51.100.1')).statusCode).toBe(200)
    const over = await from('198.51.100.1')
    expect(over.statusCode).toBe(429)
    expect(over.headers['retry-after']).toBeDefined()
    expect((await from('198.51.100.2')).statusCode).toBe(200)
  })
})

describe('monthly quota', () => {
  it('meters units atomically, refuses past the quota with 429, and resets next month', async () => {
    h = await build()
    h.clock.set(Date.UTC(2026, 10, 30, 23, 0, 0))
    const t = await h.tenant({ monthlyQuota: 10 })
    const tenant = (await h.store.tenants.get(t.tenantId))!
    const ctx = contextFor(h.services, tenant, 'test')
    const meter = (units: number) => h.store.db.tx(() => consumeQuota(ctx, units, h.clock.now()))
    await meter(7)
    const err = await meter(4).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).status).toBe(429)
    expect((err as ApiError).message).toMatch(/monthly quota of 10/)
    expect((err as ApiError).headers['Retry-After']).toBe('3600')
    await meter(3)
    await expect(meter(1)).rejects.toThrow(/monthly quota/)
    h.clock.advance(3600_000)
    await meter(10)
    // The refused calls left nothing behind: November used exactly 10.
    expect(await h.store.usage.used(t.tenantId, '2026-11')).toBe(10)
    expect(await h.store.usage.used(t.tenantId, '2026-12')).toBe(10)
  })

  it('refuses an over-quota identifier check before any DNS lookup', async () => {
    const { dns } = await testIntel()
    h = await build()
    const t = await h.tenant({ monthlyQuota: 2 })
    const post = (url: string, payload: object) =>
      h.app.inject({ method: 'POST', url, headers: t.headers, payload })
    // Within the quota the mail server is looked up.
    expect((await post('/v1/check/email', { email: 'someone@quota-first.example.com' })).statusCode).toBe(200)
    expect(dns.count('quota-first.example.com')).toBeGreaterThan(0)
    // One unit left: a two-row batch and a two-identifier /v1/check do not fit, and cost nothing.
    const batch = await post('/v1/batch/check/email', {
      rows: [{ email: 'a@quota-batch.example.com' }, { email: 'b@quota-batch.example.com' }],
    })
    expect(batch.statusCode).toBe(429)
    expect(batch.json().error).toMatch(/monthly quota of 2/)
    expect(batch.headers['retry-after']).toBeDefined()
    const both = await post('/v1/check', { email: 'c@quota-combined.example.com', ip: '8.8.8.8' })
    expect(both.statusCode).toBe(429)
    expect(await h.store.usage.used(t.tenantId, new Date(h.clock.now()).toISOString().slice(0, 7))).toBe(1)
    expect((await post('/v1/check/email', { email: 'someone@quota-last.example.com' })).statusCode).toBe(200)
    const over = await post('/v1/check/email', { email: 'someone@quota-over.example.com' })
    expect(over.statusCode).toBe(429)
    expect(over.json().error).toMatch(/monthly quota/)
    for (const name of ['quota-batch.example.com', 'quota-combined.example.com', 'quota-over.example.com']) {
      expect(dns.count(name), name).toBe(0)
    }
  })

  it('defaults to 10,000 units for a new tenant', async () => {
    h = await build()
    const t = await h.tenant()
    expect((await h.store.tenants.get(t.tenantId))?.monthlyQuota).toBe(10_000)
  })
})

describe('keyless limits on health and openapi', () => {
  it('limits /v1/health and /v1/openapi.json per client IP, keys or not', async () => {
    h = await build({ keylessRateLimit: 2 })
    const t = await h.tenant()
    const get = (url: string, ip: string, headers = {}) => h.app.inject({ url, remoteAddress: ip, headers })
    expect((await get('/v1/health', '198.51.100.1')).statusCode).toBe(200)
    expect((await get('/v1/openapi.json', '198.51.100.1', t.headers)).statusCode).toBe(200)
    for (const url of ['/v1/health', '/v1/openapi.json']) {
      const over = await get(url, '198.51.100.1', t.headers)
      expect(over.statusCode, url).toBe(429)
      expect(over.headers['retry-after'], url).toBeDefined()
      expect(over.json().error).toMatch(/rate limit/)
    }
    expect((await get('/v1/health', '198.51.100.2')).statusCode).toBe(200)
    // One IPv6 subscriber (/64) is one client.
    expect((await get('/v1/health', '2001:db8:1:2::1')).statusCode).toBe(200)
    expect((await get('/v1/health', '2001:db8:1:2::2')).statusCode).toBe(200)
    expect((await get('/v1/health', '2001:db8:1:2::3')).statusCode).toBe(429)
    h.clock.advance(60_000)
    expect((await get('/v1/health', '198.51.100.1')).statusCode).toBe(200)
  })
})

describe('failed API-key attempts', () => {
  const wrong = { 'x-api-key': 'vk_wrongwrongwrongwrongwrongwrongwrong' }

  it('answers 429 per client IP past the bound, before any key lookup; keys that work still work', async () => {
    h = await build({ authFailureLimit: 3 })
    h.clock.set(Date.UTC(2026, 10, 22, 10, 0, 15))
    const t = await h.tenant()
    const from = (ip: string, headers: Record<string, string>, url = '/v1/config') =>
      h.app.inject({ url, headers, remoteAddress: ip })
    const ip = '203.0.113.9'
    expect((await from(ip, t.headers)).statusCode).toBe(200)
    expect((await from(ip, wrong)).statusCode).toBe(401)
    expect((await from(ip, { authorization: 'Bearer vk_nope_nope' })).statusCode).toBe(401)
    expect((await from(ip, {})).statusCode).toBe(401)
    const over = await from(ip, wrong)
    expect(over.statusCode).toBe(429)
    // Three failures a minute: one more is allowed every 20 s.
    expect(over.headers['retry-after']).toBe('20')
    expect(over.json().error).toMatch(/failed API-key attempts/)
    expect((await from(ip, {})).statusCode).toBe(429)
    // A wrong key on keyless /v1/check is a guess too; keyless use without a key is not affected.
    const check = (headers: Record<string, string>) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/check',
        headers,
        payload: { ip: '8.8.8.8' },
        remoteAddress: ip,
      })
    expect((await check(wrong)).statusCode).toBe(429)
    expect((await check({})).statusCode).toBe(200)
    // The refusal needs no key lookup: it holds even with the key table gone.
    await h.store.db.run('ALTER TABLE api_keys RENAME TO api_keys_away')
    expect((await from(ip, wrong)).statusCode).toBe(429)
    await h.store.db.run('ALTER TABLE api_keys_away RENAME TO api_keys')
    // The key that authenticated before still works from this address; other addresses are untouched.
    expect((await from(ip, t.headers)).statusCode).toBe(200)
    expect((await from('203.0.113.10', wrong)).statusCode).toBe(401)
    // A key never seen from anywhere waits until the budget refills, like every unknown key.
    const fresh = await h.tenant()
    expect((await from(ip, fresh.headers)).statusCode).toBe(429)
    h.clock.advance(19_000)
    expect((await from(ip, fresh.headers)).statusCode).toBe(429)
    h.clock.advance(1_000)
    expect((await from(ip, fresh.headers)).statusCode).toBe(200)
    expect((await from(ip, wrong)).statusCode).toBe(401)
  })

  it('allows 30 failed attempts per client IP per minute by default', async () => {
    h = await build()
    const codes: number[] = []
    for (let i = 0; i < 31; i++)
      codes.push((await h.app.inject({ url: '/v1/lists', headers: wrong })).statusCode)
    expect(codes.slice(0, 30).every((c) => c === 401)).toBe(true)
    expect(codes[30]).toBe(429)
  })
})
