import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { networkWeight } from '../../src/scoring/network-signals.js'
import { build, type Harness, TEST_SECRET, type TestTenant } from '../helpers/build.js'
import { runCli } from '../helpers/processes.js'

let h: Harness
let a: TestTenant
beforeEach(async () => {
  h = await build()
  a = await h.tenant({ shareNetwork: true })
})
afterEach(async () => {
  await h.close()
})

const score = async (payload: object, t: TestTenant) =>
  (await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })).json()
const label = (payload: object, t: TestTenant) =>
  h.app.inject({ method: 'POST', url: '/v1/label', headers: t.headers, payload })
const network = (body: { checks: { reason: string; weight: number; evidence: Record<string, unknown> }[] }) =>
  body.checks.find((c) => c.reason === 'seen_in_fraud_network')

describe('labels and the operator network', () => {
  const victim = { event: 'signup', email: 'fraudster+1@gmail.com', ip: '79.200.1.1', user_id: 'u-1' }

  it('fraud on a scored event of an opted-in tenant flags its entities for every tenant', async () => {
    const ev = await score(victim, a)
    const res = await label({ label: 'fraud', event_id: ev.event_id }, a)
    expect(res.statusCode).toBe(200)
    expect(res.json().network.contributed.sort()).toEqual(['email', 'ip', 'user'])
    const b = await h.tenant()
    const seen = await score({ event: 'signup', email: 'fraudster@gmail.com' }, b)
    expect(network(seen)).toMatchObject({
      weight: 20,
      evidence: { operators: 1, entity_kinds: ['email'], email_operators: 1 },
    })
    expect(JSON.stringify(network(seen))).not.toContain(a.tenantId)
    // The same tenant sees its own flag too.
    expect(network(await score({ event: 'login', ip: '79.200.1.1' }, a))?.weight).toBe(20)
    // The event's recorded verdict does not change.
    const events = (await h.app.inject({ url: '/v1/events', headers: a.headers })).json().events
    expect(events.find((e: { id: string }) => e.id === ev.event_id).verdict).toBe(ev.verdict)
  })

  it('a tenant that did not opt in contributes nothing', async () => {
    const closed = await h.tenant()
    const ev = await score(victim, closed)
    const res = await label({ label: 'chargeback', event_id: ev.event_id }, closed)
    expect(res.json().network).toMatchObject({ shared: false, contributed: [] })
    expect(network(await score(victim, a))).toBeUndefined()
  })

  it("answers 404 for an event the tenant did not score, including another tenant's", async () => {
    const ev = await score(victim, a)
    const b = await h.tenant({ shareNetwork: true })
    const res = await label({ label: 'fraud', event_id: ev.event_id }, b)
    expect(res.statusCode).toBe(404)
    expect((await label({ label: 'fraud', event_id: 'nope' }, a)).statusCode).toBe(404)
    expect((await h.store.db.all('SELECT * FROM network_flags')).length).toBe(0)
  })

  it('grows the weight with distinct flagging operators: 1 → 20, 2 → 30, 3+ → 40', async () => {
    expect([0, 1, 2, 3, 7].map((n) => networkWeight(n))).toEqual([0, 20, 30, 30 + 10, 40])
    const observer = await h.tenant()
    const weights: number[] = []
    for (let i = 0; i < 4; i++) {
      const t = i === 0 ? a : await h.tenant({ shareNetwork: true })
      const ev = await score({ event: 'signup', ip: '24.5.1.1', user_id: `x${i}` }, t)
      await label({ label: 'fraud', event_id: ev.event_id }, t)
      weights.push(network(await score({ event: 'login', ip: '24.5.1.1' }, observer))!.weight)
    }
    expect(weights).toEqual([20, 30, 40, 40])
  })

  it('legit is a local suppression only: it removes no flag from the network, not even its own tenant’s', async () => {
    const ev = await score(victim, a)
    await label({ label: 'fraud', event_id: ev.event_id }, a)
    const b = await h.tenant({ shareNetwork: true })
    const evB = await score(victim, b)
    await label({ label: 'fraud', event_id: evB.event_id }, b)
    const res = await label({ label: 'legit', event_id: ev.event_id, note: 'verified customer' }, a)
    expect(res.json()).toMatchObject({
      label: 'legit',
      suppressed: expect.arrayContaining(['email', 'ip', 'user']),
      network: { shared: true, contributed: [] },
    })
    expect(res.json().network.withdrawn_flags).toBeUndefined()
    // A no longer acts on these entities; both flags, A's own included, still count for everyone else.
    expect(network(await score(victim, a))).toBeUndefined()
    const c = await h.tenant()
    expect(network(await score(victim, c))?.evidence.operators).toBe(2)
    expect(network(await score(victim, b))?.evidence.operators).toBe(2)
    const checked = await h.app.inject({
      method: 'POST',
      url: '/v1/check/email',
      headers: c.headers,
      payload: { email: victim.email },
    })
    expect(checked.json().reputation.network_operators).toBe(2)
    expect((await h.store.db.all('SELECT * FROM network_flags')).length).toBe(6)
    const sup = (await h.app.inject({ url: '/v1/suppressions', headers: a.headers })).json().suppressions
    expect(sup.map((s: { action: string }) => s.action)).toEqual(['legit', 'legit', 'legit'])
    expect(sup[0]).toMatchObject({ eventId: ev.event_id, valueHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect((await h.app.inject({ url: '/v1/suppressions', headers: b.headers })).json().suppressions).toEqual(
      [],
    )
    // A later fraud label from A on a suppressed entity does not feed the network.
    const again = await score(victim, a)
    expect((await label({ label: 'fraud', event_id: again.event_id }, a)).json().network.contributed).toEqual(
      [],
    )
  })

  it('contributes only the identifiers recorded on the event; entities stay with the tenant', async () => {
    const target = 'innocent.person@example.com'
    const other = await h.tenant()
    const checkEmail = async (email: string) =>
      (
        await h.app.inject({
          method: 'POST',
          url: '/v1/check/email',
          headers: other.headers,
          payload: { email },
        })
      ).json().reputation.network_operators as number
    // An event with no identifiers at all, labelled with somebody else's email and IP.
    const bare = await score({ event: 'x' }, a)
    const res = await label(
      { label: 'fraud', event_id: bare.event_id, entities: { email: target, ip: '79.200.7.7' } },
      a,
    )
    expect(res.statusCode).toBe(200)
    expect(res.json().network.contributed).toEqual([])
    expect(await checkEmail(target)).toBe(0)
    expect(network(await score({ event: 'signup', email: target, ip: '79.200.7.7' }, other))).toBeUndefined()
    // The label itself is kept, for this tenant only.
    const subject = (who: TestTenant) =>
      h.app.inject({ method: 'POST', url: '/v1/subject', headers: who.headers, payload: { email: target } })
    expect((await subject(a)).json().counts.labels).toBe(1)
    expect((await subject(other)).json().counts.labels).toBe(0)
    // An event's own identifiers do reach the network, and entities beside them still do not.
    const real = await score({ event: 'signup', email: 'real.fraudster@example.com', user_id: 'rf-1' }, a)
    const res2 = await label(
      {
        label: 'chargeback',
        event_id: real.event_id,
        entities: { email: target, device_id: 'fp-of-someone' },
      },
      a,
    )
    expect(res2.json().network.contributed.sort()).toEqual(['email', 'user'])
    expect(await checkEmail('real.fraudster@example.com')).toBe(1)
    expect(await checkEmail(target)).toBe(0)
    expect(network(await score({ event: 'login', device_id: 'fp-of-someone' }, other))).toBeUndefined()
  })

  it('accepts entities without an event, recorded locally only', async () => {
    const res = await label({ label: 'fraud', entities: { email: 'someone@example.com', ip: '1.2.3.4' } }, a)
    expect(res.statusCode).toBe(200)
    expect(res.json().network.contributed).toEqual([])
    expect((await label({ label: 'fraud' }, a)).statusCode).toBe(400)
    expect((await label({ label: 'fraud', entities: { ip: 'nope' } }, a)).statusCode).toBe(400)
    expect((await label({ label: 'maybe', event_id: 'x' }, a)).json().error).toContain('body.label')
    expect((await label({ label: 'fraud', event_id: 'x'.repeat(65) }, a)).statusCode).toBe(400)
    expect((await label({ label: 'fraud', event_id: 'x', note: 'n'.repeat(501) }, a)).statusCode).toBe(400)
  })
})

describe('abusive_asn', () => {
  it('fires when an ASN’s fraud rate over the rolling window passes the threshold with enough events', async () => {
    // Hetzner-like hosting traffic: 60 events from AS3320 addresses (Deutsche Telekom), 20 of them blocked.
    for (let i = 0; i < 60; i++) {
      await score(
        {
          event: 'signup',
          ip: `79.200.${i}.1`,
          ...(i < 20 ? { device: { is_headless: true, is_tampered: true } } : {}),
        },
        a,
      )
    }
    await h.jobs.runNow('asn-rates')
    const hit = await score({ event: 'login', ip: '79.200.99.9' }, a)
    expect(hit.checks.find((c: { reason: string }) => c.reason === 'abusive_asn')).toMatchObject({
      weight: 35,
      evidence: { asn: 3320, events: 60, threshold: 0.3 },
    })
    // A week later the window is empty again.
    h.clock.advance(8 * 24 * 3600_000)
    await h.jobs.runNow('asn-rates')
    expect((await score({ event: 'login', ip: '79.200.99.9' }, a)).reasons).not.toContain('abusive_asn')
  })

  it('needs a minimum sample and counts fraud labels', async () => {
    const ids: string[] = []
    for (let i = 0; i < 49; i++) ids.push((await score({ event: 'signup', ip: `73.162.${i}.2` }, a)).event_id)
    await h.jobs.runNow('asn-rates')
    expect((await score({ event: 'x', ip: '73.162.200.1' }, a)).reasons).not.toContain('abusive_asn')
    for (const id of ids.slice(0, 20)) await label({ label: 'chargeback', event_id: id }, a)
    await h.jobs.runNow('asn-rates')
    expect((await score({ event: 'x', ip: '73.162.200.2' }, a)).reasons).toContain('abusive_asn')
  })
})

describe('abuse traps', () => {
  it('answers decoy paths with 404 and records the caller IP, driving abuse_ip and honeypot_hits', async () => {
    for (const url of ['/wp-login.php', '/.env']) {
      const res = await h.app.inject({ url, remoteAddress: '203.0.113.50' })
      expect(res.statusCode).toBe(404)
      expect(res.json().error).toContain(url)
    }
    const rows = await h.store.db.all<{ ip_prefix: string }>('SELECT ip_prefix FROM trap_hits')
    expect(rows.map((r) => r.ip_prefix)).toEqual(['203.0.113.0/24', '203.0.113.0/24'])
    expect(JSON.stringify(rows)).not.toContain('203.0.113.50')
    const s = await score({ event: 'login', ip: '203.0.113.50' }, a)
    expect(s.checks.find((c: { reason: string }) => c.reason === 'abuse_ip')).toMatchObject({
      weight: 40,
      evidence: { trap_hits: 2 },
    })
    const check = (
      await h.app.inject({
        method: 'POST',
        url: '/v1/check/ip',
        headers: a.headers,
        payload: { ip: '203.0.113.50' },
      })
    ).json()
    expect(check.reputation).toMatchObject({ honeypot_hits: 2, recent_abuse: true })
    expect((await score({ event: 'login', ip: '203.0.113.51' }, a)).reasons).not.toContain('abuse_ip')
    // Hits age out after 30 days.
    h.clock.advance(31 * 24 * 3600_000)
    expect((await score({ event: 'login', ip: '203.0.113.50' }, a)).reasons).not.toContain('abuse_ip')
  })

  const honeypot = async (ip: string) =>
    (await h.app.inject({ method: 'POST', url: '/v1/check/ip', headers: a.headers, payload: { ip } })).json()
      .reputation.honeypot_hits as number

  it('records nothing for requests a browser made for some page: sub-resources, cross-site, foreign referers', async () => {
    const ip = '203.0.113.60'
    const browserMade: Record<string, string>[] = [
      // <img src="https://verdict.example/.env"> on any web page
      { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-dest': 'script' },
      // a link or form on another site, followed by the visitor's browser
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'cross-site' },
      // older browsers without Sec-Fetch-*: a foreign Referer or Origin, or an image Accept header
      { referer: 'https://evil.example/page.html' },
      { origin: 'null' },
      { origin: 'https://evil.example' },
      { accept: 'image/avif,image/webp,*/*' },
    ]
    for (const headers of browserMade) {
      for (const url of ['/.env', '/wp-login.php']) {
        const res = await h.app.inject({ url, headers, remoteAddress: ip })
        expect(res.statusCode, JSON.stringify(headers)).toBe(404)
        expect(res.json()).toEqual({
          error: `no route for GET ${url}`,
          code: 'not_found',
          request_id: expect.any(String),
        })
      }
    }
    expect(await honeypot(ip)).toBe(0)
    expect((await score({ event: 'login', ip }, a)).reasons).not.toContain('abuse_ip')
    // A scanner sends none of those headers (or a Referer naming this very host): recorded.
    await h.app.inject({ url: '/.env', headers: { referer: 'http://localhost/' }, remoteAddress: ip })
    expect(await honeypot(ip)).toBe(1)
    // Typing the path in the address bar is a direct request too.
    const typed = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' }
    await h.app.inject({ url: '/wp-login.php', headers: typed, remoteAddress: ip })
    expect(await honeypot(ip)).toBe(2)
  })

  it('records at most 5 hits per client IP per minute; more answer the same 404 unrecorded', async () => {
    const paths = [
      '/wp-login.php',
      '/wp-admin',
      '/xmlrpc.php',
      '/.env',
      '/.git/config',
      '/phpmyadmin',
      '/admin.php',
    ]
    for (const url of paths) {
      const res = await h.app.inject({ url, remoteAddress: '198.51.100.70' })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({
        error: `no route for GET ${url}`,
        code: 'not_found',
        request_id: expect.any(String),
      })
    }
    expect(await honeypot('198.51.100.70')).toBe(5)
    // Another address has its own budget; IPv6 addresses of one /64 share one.
    expect((await h.app.inject({ url: '/.env', remoteAddress: '198.51.100.71' })).statusCode).toBe(404)
    expect(await honeypot('198.51.100.71')).toBe(1)
    for (let i = 1; i <= 7; i++)
      await h.app.inject({ url: paths[i - 1]!, remoteAddress: `2001:db8:5:6::${i}` })
    const v6 = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => honeypot(`2001:db8:5:6::${i}`)))
    expect(v6.reduce((x, y) => x + y, 0)).toBe(5)
    // The next minute opens a new budget.
    h.clock.advance(60_000)
    await h.app.inject({ url: '/cgi-bin/luci', remoteAddress: '198.51.100.70' })
    expect(await honeypot('198.51.100.70')).toBe(6)
  })

  it('imports trap hits from a file with the CLI', async () => {
    const file = join(h.dir, 'traps.txt')
    writeFileSync(
      file,
      `# scanners\n198.51.100.7\n198.51.100.7,${Date.now()},/wp-login.php\nnot-an-ip\n2001:db8::5,2026-11-01T00:00:00Z\n`,
    )
    const dbFile = join(h.dir, 'verdict.db')
    const r = runCli(['traps', 'import', file], {
      DATABASE_URL: dbFile,
      VERDICT_SECRET: TEST_SECRET,
    })
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ imported: 3, stored: 3, malformed: 1 })
    expect(r.stderr).toContain('3 hits')
    const hits = await h.store.network.trapHits(h.hasher.entity('ip', '198.51.100.7'), Date.now())
    expect(hits).toBe(2)
  })
})
