import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'

let h: Harness
let t: TestTenant
beforeEach(async () => {
  h = await build()
  t = await h.tenant()
})
afterEach(async () => {
  await h.close()
})

const score = async (payload: Record<string, unknown>, headers: Record<string, string> = t.headers) => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}
const fired = (body: { checks: { reason: string; weight: number }[] }) =>
  Object.fromEntries(body.checks.map((c) => [c.reason, c.weight]))

describe('POST /v1/score reason codes with real reference data', () => {
  const cases: [string, Record<string, unknown>, Record<string, number>][] = [
    [
      'a residential IP and a normal address fire nothing',
      { ip: '73.162.10.20', email: 'maria.garcia@acme-corp.com' },
      {},
    ],
    ['cloud IP', { ip: '8.8.8.8' }, { datacenter_ip: 45 }],
    ['open proxy from the proxy feed', { ip: '5.9.60.2' }, { proxy_ip: 30, datacenter_ip: 45 }],
    ['named VPN operator', { ip: '185.65.134.7' }, { vpn_ip: 30 }],
    ['Tor exit counts as a proxy', { ip: '185.220.101.1' }, { proxy_ip: 30 }],
    ['private relay is informational only', { ip: '172.225.10.1' }, { privacy_relay: 0 }],
    ['geo mismatch from geolocation', { ip: '73.162.10.20', event_country: 'DE' }, { geo_mismatch: 20 }],
    [
      'geo mismatch from the ip_country header',
      { ip_country: 'FR', event_country: 'DE' },
      { geo_mismatch: 20 },
    ],
    ['geo match', { ip: '79.200.1.1', event_country: 'de' }, {}],
    [
      'time zone of another country',
      { ip: '73.162.10.20', timezone: 'Europe/Paris' },
      { timezone_mismatch: 35 },
    ],
    ['time zone alias of the right country', { ip: '73.162.10.20', timezone: 'US/Eastern' }, {}],
    ['UTC never mismatches', { ip: '73.162.10.20', timezone: 'UTC' }, {}],
    ['disposable email', { email: 'someone@yopmail.com' }, { disposable_email: 35 }],
    ['domain without mail server', { email: 'someone@no-such-domain-here.example.com' }, { email_no_mx: 25 }],
    ['null MX', { email: 'someone@nullmx.example.com' }, { email_no_mx: 25 }],
    ['gibberish mailbox', { email: 'xkqzvbwpjhd@example.com' }, { gibberish_email: 20 }],
    ['plus tag', { email: 'maria+shop@gmail.com' }, { plus_addressing: 10 }],
    ['headless', { device: { is_headless: true } }, { headless_browser: 45 }],
    ['ua inconsistent', { device: { ua_consistent: false } }, { device_inconsistent: 25 }],
    ['emulated', { device: { is_emulated: true } }, { emulated_environment: 40 }],
    ['noise', { device: { is_noise_injected: true } }, { noise_injected: 45 }],
    ['tampered', { device: { is_tampered: true } }, { device_tampered: 45 }],
    ['context', { device: { is_context_mismatch: true } }, { context_mismatch: 45 }],
    ['engine', { device: { is_engine_mismatch: true } }, { engine_ua_mismatch: 40 }],
    ['os', { device: { is_os_mismatch: true } }, { os_mismatch: 45 }],
    [
      'antidetect',
      { device: { antidetect_score: 90, antidetect_confidence: 'high' } },
      { antidetect_browser: 40 },
    ],
    [
      'mobile flags',
      { device: { is_emulator: true, is_rooted: true, is_mock_location: true } },
      { emulated_environment: 40, rooted_device: 20, mock_location: 30 },
    ],
  ]
  it.each(cases)('%s', async (_name, payload, expected) => {
    const body = await score({ event: 'signup', ...payload })
    expect(fired(body)).toEqual(expected)
    expect(body.reasons).toEqual(body.checks.map((c: { reason: string }) => c.reason))
    const sum = body.checks.reduce((s: number, c: { weight: number }) => s + c.weight, 0)
    expect(body.score).toBe(Math.min(100, sum))
    for (const c of body.checks) expect(c.evidence).toBeTypeOf('object')
  })

  it('never fires email_no_mx when DNS times out or fails, and says so in warnings', async () => {
    for (const domain of ['slow.example.com', 'broken.example.com']) {
      const body = await score({ event: 'signup', email: `someone@${domain}` })
      expect(body.reasons).not.toContain('email_no_mx')
      expect(body.warnings).toEqual([expect.stringMatching(/^email_mx_unknown/)])
    }
  })

  it('never looks up a domain outside the public DNS and never fires email_no_mx for it', async () => {
    const { dns } = await testIntel()
    for (const domain of ['corp.internal', 'mail.localhost', 'intranet.lan']) {
      const before = dns.queries.length
      const body = await score({ event: 'signup', email: `someone@${domain}` })
      expect(body.reasons).not.toContain('email_no_mx')
      expect(dns.queries.slice(before), domain).toEqual([])
    }
  })

  it('returns identity whenever an email was sent, and warns about unusable input', async () => {
    const body = await score({ event: 'signup', email: 'John.Doe+promo@googlemail.com' })
    expect(body.identity).toEqual({
      email_canonical: 'johndoe@gmail.com',
      email_is_aliased: true,
      email_alias_tricks: expect.arrayContaining(['plus_tag', 'dot_trick', 'domain_alias']),
    })
    expect((await score({ event: 'login' })).identity).toBeUndefined()
    const bad = await score({ event: 'login', ip: 'not-an-ip', email: 'nope' })
    expect(bad.warnings).toEqual([
      expect.stringMatching(/^ip_invalid/),
      expect.stringMatching(/^email_malformed/),
    ])
    expect(bad.identity.email_canonical).toBeNull()
  })

  it('writes a plain-English reason_text with the strongest reasons first and no raw identifiers', async () => {
    const body = await score({
      event: 'signup',
      ip: '8.8.8.8',
      email: 'maria+x@yopmail.com',
      user_id: 'user-secret-42',
      device: { is_headless: true },
    })
    const text: string = body.reason_text
    expect(text).toMatch(/^Blocked with a risk score of 100\./)
    expect(text.indexOf('hosting provider')).toBeLessThan(text.indexOf('disposable'))
    for (const raw of ['8.8.8.8', 'maria', 'user-secret-42', 'yopmail']) expect(text).not.toContain(raw)
  })
})

describe('ip_velocity', () => {
  it('counts distinct accounts per IP in a 10-minute window: 5 → 25, 10 → 40', async () => {
    const reasons: Record<number, number | undefined> = {}
    for (let i = 1; i <= 10; i++) {
      const body = await score({ event: 'signup', ip: '73.162.10.20', user_id: `user-${i}` })
      reasons[i] = fired(body).ip_velocity
      h.clock.advance(10_000)
    }
    expect(reasons).toEqual({
      1: undefined,
      2: undefined,
      3: undefined,
      4: undefined,
      5: 25,
      6: 25,
      7: 25,
      8: 25,
      9: 25,
      10: 40,
    })
    // The same account again does not add an account.
    const again = await score({ event: 'login', ip: '73.162.10.20', user_id: 'user-3' })
    expect(again.checks.find((c: { reason: string }) => c.reason === 'ip_velocity').evidence.accounts).toBe(
      10,
    )
    // Ten minutes after the first ones, they drop out of the window.
    h.clock.advance(10 * 60_000 - 50_000)
    const later = await score({ event: 'login', ip: '73.162.10.20', user_id: 'user-new' })
    expect(later.checks.find((c: { reason: string }) => c.reason === 'ip_velocity').evidence.accounts).toBe(6)
    // Another tenant's history is not counted.
    const other = await h.tenant()
    expect(fired(await score({ event: 'signup', ip: '73.162.10.20', user_id: 'x' }, other.headers))).toEqual(
      {},
    )
  })
})

describe('tenant configuration and verdicts', () => {
  const put = (payload: object) =>
    h.app.inject({ method: 'PUT', url: '/v1/config', headers: t.headers, payload })

  it.each([
    [39, 'allow'],
    [40, 'review'],
    [69, 'review'],
    [70, 'block'],
  ])('a datacenter weight of %i gives %s at the default thresholds', async (weight, verdict) => {
    await put({ weights: { datacenterIp: weight } })
    const body = await score({ event: 'signup', ip: '8.8.8.8' })
    expect(body.score).toBe(weight)
    expect(body.verdict).toBe(verdict)
  })

  it('applies tenant thresholds, weights and velocity tiers after PUT /v1/config', async () => {
    await put({
      weights: { emailDisposable: 12, ipVelocityMed: 3, ipVelocityHigh: 7 },
      thresholds: { review: 10, block: 20, ipVelocityMed: 2, ipVelocityHigh: 3 },
    })
    const d = await score({ event: 'signup', email: 'a@yopmail.com' })
    expect(d).toMatchObject({ score: 12, verdict: 'review' })
    await score({ event: 'signup', ip: '79.200.1.1', user_id: 'a' })
    expect(fired(await score({ event: 'signup', ip: '79.200.1.1', user_id: 'b' })).ip_velocity).toBe(3)
    expect(fired(await score({ event: 'signup', ip: '79.200.1.1', user_id: 'c' })).ip_velocity).toBe(7)
  })
})

describe('tenant lists', () => {
  const add = (list: string, type: string, value: string) =>
    h.app.inject({ method: 'POST', url: '/v1/lists', headers: t.headers, payload: { list, type, value } })

  it.each([
    ['ip', '::ffff:8.8.4.4', { ip: '8.8.4.4' }],
    ['email', 'johndoe@gmail.com', { email: 'John.Doe+x@googlemail.com' }],
    ['device', 'fp-1', { device_id: 'fp-1' }],
    ['user', 'u-9', { user_id: 'u-9' }],
  ])(
    'a %s block entry gives 100/block and keeps the other checks; an allow entry gives 0/allow',
    async (type, value, event) => {
      await add('block', type, value)
      const blocked = await score({ event: 'signup', device: { is_headless: true }, ...event })
      expect(blocked).toMatchObject({ score: 100, verdict: 'block' })
      expect(blocked.reasons[0]).toBe(`blocklisted_${type}`)
      expect(blocked.reasons).toContain('headless_browser')
      expect(blocked.checks[0].weight).toBe(100)
      const other = await h.tenant()
      await h.app.inject({
        method: 'POST',
        url: '/v1/lists',
        headers: other.headers,
        payload: { list: 'allow', type, value },
      })
      const allowed = await score({ event: 'signup', device: { is_headless: true }, ...event }, other.headers)
      expect(allowed).toMatchObject({ score: 0, verdict: 'allow', reasons: [`allowlisted_${type}`] })
    },
  )

  it('block beats allow when both match', async () => {
    await add('allow', 'user', 'u-1')
    await add('block', 'ip', '73.162.10.20')
    const body = await score({ event: 'login', user_id: 'u-1', ip: '73.162.10.20' })
    expect(body).toMatchObject({ score: 100, verdict: 'block', reasons: ['blocklisted_ip'] })
  })
})

describe('POST /v1/batch/score', () => {
  const batch = (rows: unknown[]) =>
    h.app.inject({ method: 'POST', url: '/v1/batch/score', headers: t.headers, payload: { rows } })

  it('records rows in order in one transaction, so later rows see earlier ones', async () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({
      event: 'signup',
      ip: '73.162.10.20',
      user_id: `b-${i}`,
    }))
    const res = await batch(rows)
    expect(res.statusCode).toBe(200)
    const results = res.json().results
    expect(results).toHaveLength(12)
    expect(
      results.map((r: { checks: { reason: string; weight: number }[] }) => fired(r).ip_velocity ?? 0),
    ).toEqual([0, 0, 0, 0, 25, 25, 25, 25, 25, 40, 40, 40])
    expect(new Set(results.map((r: { event_id: string }) => r.event_id)).size).toBe(12)
    expect((await h.app.inject({ url: '/v1/events?limit=200', headers: t.headers })).json().total).toBe(12)
    expect(await h.store.usage.used(t.tenantId, '2026-01')).toBe(12)
  })

  it('accepts 1000 rows and rejects 0, 1001 and any batch with an invalid row (naming its index), recording nothing', async () => {
    expect(
      (await batch(Array.from({ length: 1000 }, (_, i) => ({ event: 'e', user_id: `u${i}` })))).statusCode,
    ).toBe(200)
    await h.store.db.run('DELETE FROM events')
    expect((await batch([])).statusCode).toBe(400)
    expect((await batch(Array.from({ length: 1001 }, () => ({ event: 'e' })))).statusCode).toBe(400)
    const bad = await batch([{ event: 'ok' }, { event: 'ok' }, { event: 'ok', unknown: 1 }])
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toContain('rows[2]')
    const missing = await batch([{ event: 'ok' }, { user_id: 'x' }])
    expect(missing.json().error).toContain('rows[1].event')
    expect((await h.store.db.all('SELECT id FROM events')).length).toBe(0)
  })

  it('refuses a batch that would pass the monthly quota, recording nothing', async () => {
    const small = await h.tenant({ monthlyQuota: 5 })
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/batch/score',
      headers: small.headers,
      payload: { rows: Array.from({ length: 6 }, () => ({ event: 'e' })) },
    })
    expect(res.statusCode).toBe(429)
    expect(res.json().error).toMatch(/monthly quota/)
    expect((await h.app.inject({ url: '/v1/events', headers: small.headers })).json().total).toBe(0)
    for (let i = 0; i < 5; i++) await score({ event: 'e' }, small.headers)
    const over = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: small.headers,
      payload: { event: 'e' },
    })
    expect(over.statusCode).toBe(429)
    expect((await h.app.inject({ url: '/v1/events', headers: small.headers })).json().total).toBe(5)
  })
})

describe('request validation', () => {
  const post = (payload: unknown) =>
    h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload: payload as object })
  const limits: [string, number][] = [
    ['event', 64],
    ['user_id', 256],
    ['ip', 45],
    ['email', 320],
    ['device_id', 256],
    ['device_token', 512],
    ['timezone', 64],
    ['phone', 32],
    ['phone_country', 8],
    ['event_country', 8],
    ['ip_country', 8],
    ['source', 64],
    ['site', 256],
    ['campaign', 256],
    ['affiliate', 256],
    ['link', 512],
  ]
  it.each(limits)('%s accepts %i characters and rejects one more', async (field, max) => {
    const base = field === 'event' ? {} : { event: 'e' }
    expect((await post({ ...base, [field]: 'x'.repeat(max) })).statusCode).toBe(200)
    const res = await post({ ...base, [field]: 'x'.repeat(max + 1) })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toContain(`body.${field}`)
  })

  it('requires event (1+ chars), rejects unknown fields and wrong types, and checks the device object', async () => {
    expect((await post({})).json().error).toContain('body.event')
    expect((await post({ event: '' })).statusCode).toBe(400)
    expect((await post({ event: 'e', extra: 1 })).json().error).toContain('body.extra')
    expect((await post({ event: 'e', user_id: 5 })).json().error).toContain('body.user_id')
    expect((await post({ event: 'e', device: { is_headless: 'true' } })).json().error).toContain(
      'body.device.is_headless',
    )
    expect((await post({ event: 'e', device: { nope: true } })).json().error).toContain('body.device.nope')
    expect((await post({ event: 'e', device: { antidetect_score: 100 } })).statusCode).toBe(200)
    expect((await post({ event: 'e', device: { antidetect_score: 101 } })).statusCode).toBe(400)
    expect((await post({ event: 'e', device: { antidetect_score: -1 } })).statusCode).toBe(400)
    expect((await post({ event: 'e', device: { antidetect_score: 5.5 } })).statusCode).toBe(400)
    expect((await post({ event: 'e', device: { antidetect_confidence: 'certain' } })).statusCode).toBe(400)
  })
})
