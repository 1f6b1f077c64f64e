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

const post = (url: string, payload: unknown, headers: Record<string, string> = t.headers) =>
  h.app.inject({ method: 'POST', url, headers, payload: payload as object })

describe('POST /v1/check/email', () => {
  it('answers every field for a clean address at a domain with a mail server', async () => {
    const res = await post('/v1/check/email', { email: 'maria.garcia@acme-corp.com' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.email).toMatchObject({
      fraud_score: 0,
      is_disposable: false,
      mx_valid: true,
      mx_status: 'valid',
      catch_all: false,
      catch_all_probed: false,
      looks_gibberish: false,
      has_plus_tag: false,
      canonical: 'maria.garcia@acme-corp.com',
      is_aliased: false,
      alias_tricks: [],
      is_malformed: false,
      reject_reason: null,
      recent_abuse: false,
      is_free_provider: false,
    })
    expect(body.reputation).toEqual({
      recent_abuse: false,
      network_risk: 0,
      network_operators: 0,
      honeypot_hits: 0,
    })
    expect(body.summary).toContain('no risk signals')
    expect(body.warnings).toBeUndefined()
  })

  it('scores disposable, aliased, gibberish and no-MX addresses from the documented weights', async () => {
    const disposable = (await post('/v1/check/email', { email: 'someone@mailinator.com' })).json()
    expect(disposable.email).toMatchObject({ is_disposable: true, mx_valid: true, fraud_score: 75 })
    expect(disposable.summary).toMatch(/^Disposable mail domain/)
    const alias = (await post('/v1/check/email', { email: 'John.Doe+shop@googlemail.com' })).json()
    expect(alias.email).toMatchObject({
      canonical: 'johndoe@gmail.com',
      is_aliased: true,
      has_plus_tag: true,
      is_free_provider: true,
      mx_valid: true,
      fraud_score: 10,
    })
    expect(alias.email.alias_tricks.sort()).toEqual(['domain_alias', 'dot_trick', 'plus_tag'])
    // Dots in a Gmail address are ordinary: an aliased address with dots only carries no risk.
    const dots = (await post('/v1/check/email', { email: 'john.smith@gmail.com' })).json()
    expect(dots.email).toMatchObject({ canonical: 'johnsmith@gmail.com', is_aliased: true, fraud_score: 0 })
    expect(dots.email.alias_tricks).toEqual(['dot_trick'])
    expect(dots.summary).toContain('no risk signals')
    const relay = (await post('/v1/check/email', { email: 'k3x9qzv7tw@mozmail.com' })).json()
    expect(relay.email).toMatchObject({ is_disposable: false, looks_gibberish: false })
    const noMx = (await post('/v1/check/email', { email: 'bob@no-such-domain-here.example.com' })).json()
    expect(noMx.email).toMatchObject({ mx_valid: false, mx_status: 'none', fraud_score: 60 })
    const nullMx = (await post('/v1/check/email', { email: 'bob@nullmx.example.com' })).json()
    expect(nullMx.email.mx_valid).toBe(false)
    const aOnly = (await post('/v1/check/email', { email: 'bob@a-only.example.com' })).json()
    expect(aOnly.email.mx_valid).toBe(true)
    const gib = (await post('/v1/check/email', { email: 'xkqzvbwpjhd@example.com' })).json()
    expect(gib.email).toMatchObject({ looks_gibberish: true, fraud_score: 35 })
  })

  it('treats a DNS timeout or server failure as unknown, never as no mail server', async () => {
    for (const domain of ['slow.example.com', 'broken.example.com']) {
      const body = (await post('/v1/check/email', { email: `bob@${domain}` })).json()
      expect(body.email, domain).toMatchObject({ mx_valid: true, mx_status: 'unknown', fraud_score: 0 })
      expect(body.warnings[0]).toMatch(/^email_mx_unknown/)
    }
  })

  it('never looks up a domain outside the public DNS: not_checked with a warning, no score for it', async () => {
    const { dns } = await testIntel()
    for (const domain of ['corp.internal', 'mail.localhost', 'files.home.arpa', 'intranet.lan']) {
      const before = dns.queries.length
      const body = (await post('/v1/check/email', { email: `bob@${domain}` })).json()
      expect(body.email, domain).toMatchObject({ mx_status: 'not_checked', mx_valid: true, fraud_score: 0 })
      expect(body.warnings, domain).toEqual([expect.stringMatching(/^email_mx_not_checked/)])
      expect(dns.queries.slice(before), domain).toEqual([])
    }
  })

  it('reports malformed addresses with a reject reason instead of failing', async () => {
    const cases: [string, string][] = [
      ['no-at-sign', 'missing_at'],
      [`${'a'.repeat(65)}@example.com`, 'local_too_long'],
      ['bob@-bad-.com', 'domain_invalid'],
      ['bo b@example.com', 'bad_characters'],
    ]
    for (const [email, reason] of cases) {
      const body = (await post('/v1/check/email', { email })).json()
      expect(body.email, email).toMatchObject({
        is_malformed: true,
        reject_reason: reason,
        fraud_score: 100,
        mx_valid: false,
      })
    }
  })

  it('validates the body: 3-320 characters, no unknown fields, no other types', async () => {
    expect((await post('/v1/check/email', { email: 'a@b' })).statusCode).toBe(200)
    expect((await post('/v1/check/email', { email: 'ab' })).json().error).toContain('body.email')
    expect((await post('/v1/check/email', { email: `${'a'.repeat(308)}@example.com` })).statusCode).toBe(200)
    expect((await post('/v1/check/email', { email: `${'a'.repeat(309)}@example.com` })).statusCode).toBe(400)
    expect((await post('/v1/check/email', { email: 'a@example.com', x: 1 })).json().error).toContain('body.x')
    expect((await post('/v1/check/email', { email: 123 })).statusCode).toBe(400)
    expect((await post('/v1/check/email', {})).json().error).toContain('body.email')
  })
})

describe('POST /v1/check/ip', () => {
  it('names hosting providers and geolocates real addresses', async () => {
    const google = (await post('/v1/check/ip', { ip: '8.8.8.8' })).json()
    expect(google.ip).toMatchObject({
      is_datacenter: true,
      asn: 15169,
      country: 'US',
      is_proxy: false,
      is_tor: false,
    })
    expect(google.ip.datacenter_provider).toMatch(/Google/)
    expect(google.ip.fraud_score).toBe(50)
    const comcast = (await post('/v1/check/ip', { ip: '73.162.10.20' })).json()
    expect(comcast.ip).toMatchObject({
      is_datacenter: false,
      asn: 7922,
      country: 'US',
      fraud_score: 0,
      recent_abuse: false,
    })
    expect(comcast.ip.isp).toMatch(/Comcast/)
    expect(comcast.ip.city).toBeTypeOf('string')
    const v6 = (await post('/v1/check/ip', { ip: '2003:e1::1' })).json()
    expect(v6.ip).toMatchObject({ asn: 3320, country: 'DE', is_datacenter: false })
    const mapped = (await post('/v1/check/ip', { ip: '::ffff:73.162.10.20' })).json()
    expect(mapped.ip.asn).toBe(7922)
  })

  it('uses the loaded feeds for Tor, VPN, proxy and private relay, relay winning', async () => {
    const tor = (await post('/v1/check/ip', { ip: '185.220.101.1' })).json()
    expect(tor.ip).toMatchObject({ is_tor: true, fraud_score: expect.any(Number) })
    expect(tor.ip.fraud_score).toBeGreaterThanOrEqual(75)
    const vpn = (await post('/v1/check/ip', { ip: '185.65.134.7' })).json()
    expect(vpn.ip).toMatchObject({ is_vpn: true, vpn_provider: 'Mullvad VPN' })
    const proxy = (await post('/v1/check/ip', { ip: '5.9.60.2' })).json()
    expect(proxy.ip.is_proxy).toBe(true)
    const relay = (await post('/v1/check/ip', { ip: '172.225.10.1' })).json()
    expect(relay.ip).toMatchObject({
      is_privacy_relay: true,
      is_datacenter: false,
      is_proxy: false,
      is_vpn: false,
      fraud_score: 0,
    })
    // Every feed behind these signals is loaded here, so nothing is reported as unknown.
    expect(relay.warnings).toBeUndefined()
  })

  it('says a signal is unknown, not negative, when its feed has no data', async () => {
    const { mkdtempSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { loadIpIntel } = await import('../../src/intel/ip/index.js')
    const { testIntel } = await import('../helpers/intel.js')
    const base = (await testIntel()).intel
    const bare = await loadIpIntel({ feedsDir: mkdtempSync(join(tmpdir(), 'verdict-nofeeds-')), city: false })
    await h.close()
    const { describeSources } = await import('../../src/intel/index.js')
    h = await build({
      intel: { ...base, ip: bare, sources: () => describeSources(base.email, bare, base.phone) },
    })
    t = await h.tenant()
    const body = (await post('/v1/check/ip', { ip: '185.220.101.1' })).json()
    expect(body.ip.is_tor).toBe(false)
    expect(body.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^tor_feed_not_loaded/)]))
    expect(body.warnings).toHaveLength(4)
    const health = (await h.app.inject({ url: '/v1/health', headers: t.headers })).json()
    expect(health.sources.find((s: { name: string }) => s.name === 'tor').loaded).toBe(false)
  })

  it('rejects what is not an IP address, and the length bounds', async () => {
    expect((await post('/v1/check/ip', { ip: '999.1.1.1' })).json().error).toContain('body.ip')
    expect((await post('/v1/check/ip', { ip: 'abc' })).statusCode).toBe(400)
    expect((await post('/v1/check/ip', { ip: '::' })).statusCode).toBe(400)
    expect((await post('/v1/check/ip', { ip: '1::' })).statusCode).toBe(200)
    expect((await post('/v1/check/ip', { ip: `1:2:3:4:5:6:${'0'.repeat(20)}` })).statusCode).toBe(400)
  })
})

describe('POST /v1/check/phone', () => {
  it('answers validity, line type, country and carrier for real numbers', async () => {
    const uk = (await post('/v1/check/phone', { phone: '+44 20 7946 0000' })).json()
    expect(uk.phone).toMatchObject({
      valid: true,
      line_type: 'fixed_line',
      country: 'GB',
      is_voip: false,
      fraud_score: 0,
    })
    const de = (await post('/v1/check/phone', { phone: '01512 3456789', country: 'DE' })).json()
    expect(de.phone).toMatchObject({
      valid: true,
      line_type: 'mobile',
      country: 'DE',
      e164: '+4915123456789',
    })
    expect(de.phone.carrier).toBeTypeOf('string')
    const voip = (await post('/v1/check/phone', { phone: '+44 56 0123 4567' })).json()
    expect(voip.phone).toMatchObject({ is_voip: true, line_type: 'voip', fraud_score: 50 })
    const tollFree = (await post('/v1/check/phone', { phone: '+1 800 555 0199' })).json()
    expect(tollFree.phone.line_type).toBe('toll_free')
    expect(tollFree.phone.fraud_score).toBe(30)
    const bad = (await post('/v1/check/phone', { phone: '12345' })).json()
    expect(bad.phone).toMatchObject({ valid: false, fraud_score: 100 })
    expect(bad.phone.reject_reason).toBeTypeOf('string')
  })

  it('validates length 3-32 and a two-character country', async () => {
    expect((await post('/v1/check/phone', { phone: '12' })).json().error).toContain('body.phone')
    expect((await post('/v1/check/phone', { phone: '1'.repeat(32) })).statusCode).toBe(200)
    expect((await post('/v1/check/phone', { phone: '1'.repeat(33) })).statusCode).toBe(400)
    expect((await post('/v1/check/phone', { phone: '+14155550100', country: 'USA' })).json().error).toContain(
      'body.country',
    )
    expect((await post('/v1/check/phone', { phone: '+14155550100', country: 'U' })).statusCode).toBe(400)
  })
})

describe('batch checks', () => {
  it('answers {results} in row order for 1-1000 rows and meters every row', async () => {
    const ips = Array.from({ length: 1000 }, (_, i) => ({ ip: `73.162.${Math.floor(i / 250)}.${i % 250}` }))
    const res = await post('/v1/batch/check/ip', { rows: ips })
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toHaveLength(1000)
    expect(res.json().results[0].ip.asn).toBe(7922)
    const emails = await post('/v1/batch/check/email', {
      rows: [{ email: 'a@mailinator.com' }, { email: 'b@acme-corp.com' }],
    })
    expect(
      emails.json().results.map((r: { email: { is_disposable: boolean } }) => r.email.is_disposable),
    ).toEqual([true, false])
    const phones = await post('/v1/batch/check/phone', {
      rows: [{ phone: '+442079460000' }, { phone: '030 123456', country: 'DE' }],
    })
    expect(phones.json().results.map((r: { phone: { country: string } }) => r.phone.country)).toEqual([
      'GB',
      'DE',
    ])
    expect(await h.store.usage.used(t.tenantId, '2026-01')).toBe(1004)
  })

  it('rejects 0 and 1001 rows, and a whole batch with one bad row, naming its index', async () => {
    expect((await post('/v1/batch/check/email', { rows: [] })).statusCode).toBe(400)
    const many = Array.from({ length: 1001 }, () => ({ phone: '+442079460000' }))
    expect((await post('/v1/batch/check/phone', { rows: many })).statusCode).toBe(400)
    const bad = await post('/v1/batch/check/ip', {
      rows: [{ ip: '8.8.8.8' }, { ip: '8.8.4.4' }, { ip: 'nope' }],
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toContain('rows[2]')
    expect(await h.store.usage.used(t.tenantId, '2026-01')).toBe(0)
  })
})

describe('metering and lookup history', () => {
  it('records checks with hashes and masked hints only, newest first', async () => {
    await post('/v1/check/email', { email: 'Jane.Roe+x@gmail.com' })
    h.clock.advance(1000)
    await post('/v1/check/ip', { ip: '73.162.10.20' })
    h.clock.advance(1000)
    await post('/v1/check/phone', { phone: '+44 20 7946 0123' })
    const res = await h.app.inject({ url: '/v1/lookups', headers: t.headers })
    const body = res.json()
    expect(body.total).toBe(3)
    expect(body.lookups.map((l: { kind: string }) => l.kind)).toEqual(['phone', 'ip', 'email'])
    expect(body.lookups.map((l: { hint: string }) => l.hint)).toEqual([
      '+44 ••••••23',
      '73.162.10.x',
      'ja***@gmail.com',
    ])
    expect(body.lookups[2].valueHash).toBe(h.hasher.entity('email', 'janeroe@gmail.com'))
    const dump = JSON.stringify(await h.store.db.all('SELECT * FROM lookups'))
    for (const raw of ['Jane.Roe', 'janeroe', '73.162.10.20', '7946 0123', '79460123'])
      expect(dump).not.toContain(raw)
    const emailsOnly = (
      await h.app.inject({ url: '/v1/lookups?kind=email&limit=1', headers: t.headers })
    ).json()
    expect(emailsOnly).toMatchObject({ total: 1, limit: 1, offset: 0 })
    expect((await h.app.inject({ url: '/v1/lookups?limit=201', headers: t.headers })).json().error).toContain(
      'query.limit',
    )
    expect((await h.app.inject({ url: '/v1/lookups?kind=fax', headers: t.headers })).statusCode).toBe(400)
    // Another tenant sees none of it.
    const other = await h.tenant()
    expect((await h.app.inject({ url: '/v1/lookups', headers: other.headers })).json().total).toBe(0)
  })

  it('refuses over the monthly quota with 429 and records nothing', async () => {
    const small = await h.tenant({ monthlyQuota: 3 })
    expect(
      (await post('/v1/batch/check/ip', { rows: [{ ip: '8.8.8.8' }, { ip: '1.1.1.1' }] }, small.headers))
        .statusCode,
    ).toBe(200)
    const over = await post(
      '/v1/batch/check/ip',
      { rows: [{ ip: '8.8.8.8' }, { ip: '1.1.1.1' }] },
      small.headers,
    )
    expect(over.statusCode).toBe(429)
    expect(over.json().error).toMatch(/monthly quota/)
    expect(over.headers['retry-after']).toBeDefined()
    expect((await post('/v1/check/ip', { ip: '8.8.8.8' }, small.headers)).statusCode).toBe(200)
    expect((await post('/v1/check/ip', { ip: '8.8.8.8' }, small.headers)).statusCode).toBe(429)
    const lookups = (await h.app.inject({ url: '/v1/lookups', headers: small.headers })).json()
    expect(lookups.total).toBe(3)
  })
})

describe('POST /v1/check (keyless allowed)', () => {
  it('works without a key: not metered, not recorded, never 401', async () => {
    for (const headers of [{}, { 'x-api-key': 'vk_wrong' }] as Record<string, string>[]) {
      const res = await post('/v1/check', { email: 'a@mailinator.com', ip: '8.8.8.8' }, headers)
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body.email.is_disposable).toBe(true)
      expect(body.ip.is_datacenter).toBe(true)
      expect(Object.keys(body.reputation).sort()).toEqual(['email', 'ip'])
      expect(body.summary).toContain('IP:')
    }
    expect((await h.store.db.all('SELECT * FROM lookups')).length).toBe(0)
  })

  it('with a valid key it is metered per identifier and recorded', async () => {
    const res = await post('/v1/check', { ip: '8.8.8.8' })
    expect(res.json().email).toBeUndefined()
    expect(await h.store.usage.used(t.tenantId, '2026-01')).toBe(1)
    expect((await h.app.inject({ url: '/v1/lookups', headers: t.headers })).json().total).toBe(1)
  })

  it('needs at least one identifier and rejects phone and unknown fields', async () => {
    expect((await post('/v1/check', {})).json().error).toMatch(/email, ip or both/)
    expect((await post('/v1/check', { phone: '+442079460000' })).json().error).toContain('body.phone')
    expect((await post('/v1/check', { ip: 'not-an-ip' })).statusCode).toBe(400)
    expect((await post('/v1/check', { email: 'x'.repeat(321) })).statusCode).toBe(400)
  })
})

describe('the shared network is not an anonymous lookup service', () => {
  it('keyless /v1/check answers from reference data only; keyed checks see the network', async () => {
    const email = 'maria.garcia@acme-corp.com'
    const ip = '79.200.40.40'
    // Flag both through an opted-in tenant's fraud label, and catch the IP in an abuse trap.
    const sharer = await h.tenant({ shareNetwork: true })
    const ev = (await post('/v1/score', { event: 'signup', email, ip }, sharer.headers)).json()
    await post('/v1/label', { label: 'fraud', event_id: ev.event_id }, sharer.headers)
    expect((await h.app.inject({ url: '/.env', remoteAddress: ip })).statusCode).toBe(404)

    const keyed = (await post('/v1/check', { email, ip })).json()
    expect(keyed.reputation.email).toMatchObject({ network_operators: 1, recent_abuse: true })
    expect(keyed.reputation.ip).toMatchObject({ network_operators: 1, honeypot_hits: 1, recent_abuse: true })
    expect(keyed.email.recent_abuse).toBe(true)
    expect(keyed.ip.fraud_score).toBeGreaterThan(0)
    expect(keyed.email.fraud_score).toBeGreaterThan(0)

    const zero = { recent_abuse: false, network_risk: 0, network_operators: 0, honeypot_hits: 0 }
    for (const headers of [{}, { 'x-api-key': 'vk_wrongwrongwrongwrong' }] as Record<string, string>[]) {
      const anon = await post('/v1/check', { email, ip }, headers)
      expect(anon.statusCode).toBe(200)
      const body = anon.json()
      expect(body.reputation).toEqual({ email: zero, ip: zero })
      expect(body.email).toMatchObject({ recent_abuse: false, fraud_score: 0 })
      expect(body.ip).toMatchObject({ recent_abuse: false, fraud_score: 0 })
      expect(body.summary).not.toMatch(/operator network|abuse trap/)
    }
  })
})
