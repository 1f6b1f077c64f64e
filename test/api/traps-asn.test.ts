import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TRAP_IP_CAP } from '../../src/store/network.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
let a: TestTenant
beforeEach(async () => {
  h = await build()
  a = await h.tenant({ shareNetwork: true, rateLimit: 100_000 })
})
afterEach(async () => {
  await h.close()
})

const score = async (payload: object, t: TestTenant) =>
  (await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })).json()
const trap = (ip: string, path: string) =>
  h.store.db.tx(() =>
    h.store.network.addTrapHit(h.hasher.entity('ip', ip), `${ip}/32`, path, 'import', h.clock.now()),
  )
const storedHits = async () =>
  Number((await h.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM trap_hits'))?.n)

describe('trap hits are bounded', () => {
  it('stores one hit per IP and path per hour, at most TRAP_IP_CAP per IP, and deletes expired ones', async () => {
    expect(await trap('198.51.100.9', '/.env')).toBe(true)
    h.clock.advance(30 * 60_000)
    expect(await trap('198.51.100.9', '/.env')).toBe(false)
    expect(await storedHits()).toBe(1)
    h.clock.advance(61 * 60_000)
    expect(await trap('198.51.100.9', '/.env')).toBe(true)
    for (let i = 0; i < TRAP_IP_CAP + 5; i++) await trap('198.51.100.10', `/p${i}`)
    expect(await storedHits()).toBe(2 + TRAP_IP_CAP)
    h.clock.advance(31 * 24 * 3600_000)
    expect(await h.store.network.pruneTraps(h.clock.now())).toBe(2 + TRAP_IP_CAP)
    expect(await storedHits()).toBe(0)
  })

  it("a tenant's legit label hides the IP's trap hits from that tenant only", async () => {
    const b = await h.tenant()
    await trap('198.51.100.20', '/wp-login.php')
    const ev = await score({ event: 'login', ip: '198.51.100.20', user_id: 'u1' }, a)
    expect(ev.reasons).toContain('abuse_ip')
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: a.headers,
      payload: { label: 'legit', event_id: ev.event_id },
    })
    expect(res.statusCode).toBe(200)
    expect((await score({ event: 'login', ip: '198.51.100.20' }, a)).reasons).not.toContain('abuse_ip')
    expect((await score({ event: 'login', ip: '198.51.100.20' }, b)).reasons).toContain('abuse_ip')
  })
})

describe('abusive_asn cannot feed itself or be manufactured', () => {
  const put = (t: TestTenant, payload: object) =>
    h.app.inject({ method: 'PUT', url: '/v1/config', headers: t.headers, payload })
  const rated = async (t: TestTenant, ip: string) => {
    await h.app.jobs.refreshAsnRates()
    return ((await score({ event: 'login', ip }, t)).reasons as string[]).includes('abusive_asn')
  }

  it('events blocked only by abusive_asn do not keep the ASN flagged', async () => {
    // abusive_asn alone blocks for this tenant: a rate that counted blocks would feed itself.
    expect((await put(a, { thresholds: { review: 20, block: 30 } })).statusCode).toBe(200)
    for (let i = 0; i < 60; i++) {
      const bad = i < 20 ? { device: { is_headless: true, is_tampered: true } } : {}
      await score({ event: 'signup', ip: `79.200.${i}.1`, ...bad }, a)
    }
    expect(await rated(a, '79.200.99.9')).toBe(true)
    let blocked = 0
    for (let i = 0; i < 200; i++) {
      const r = await score({ event: 'login', ip: `79.200.${100 + (i % 100)}.${1 + Math.floor(i / 100)}` }, a)
      if (r.verdict === 'block' && r.reasons.length === 1) blocked++
    }
    expect(blocked).toBeGreaterThan(100)
    expect(await rated(a, '79.200.99.10')).toBe(false)
  })

  it("a tenant's blocklist hits never flag an ASN", async () => {
    const list = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: a.headers,
      payload: { list: 'block', type: 'user', value: 'mule' },
    })
    expect(list.statusCode).toBe(200)
    for (let i = 0; i < 60; i++) {
      expect((await score({ event: 'login', user_id: 'mule', ip: `73.162.${i}.7` }, a)).verdict).toBe('block')
    }
    expect(await rated(a, '73.162.200.7')).toBe(false)
  })

  it('a tenant that does not share counts its own events for itself only; labels count once', async () => {
    const c = await h.tenant()
    const ids: string[] = []
    for (let i = 0; i < 60; i++) ids.push((await score({ event: 'signup', ip: `79.200.${i}.3` }, c)).event_id)
    for (const id of ids.slice(0, 20)) {
      for (const l of ['fraud', 'chargeback']) {
        await h.app.inject({
          method: 'POST',
          url: '/v1/label',
          headers: c.headers,
          payload: { label: l, event_id: id },
        })
      }
    }
    expect(await rated(c, '79.200.99.3')).toBe(true)
    expect(await rated(a, '79.200.99.4')).toBe(false)
    const row = await h.store.db.get<{ bad: number }>(
      'SELECT SUM(bad) AS bad FROM asn_daily WHERE tenant_id = ?',
      [c.tenantId],
    )
    expect(Number(row?.bad)).toBe(20)
  })
})
