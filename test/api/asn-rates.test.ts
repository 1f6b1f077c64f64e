import { afterEach, describe, expect, it } from 'vitest'
import { ASN_MIN_EVENTS } from '../../src/services/network/asn-rates.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

// Comcast (AS7922) and Deutsche Telekom (AS3320) addresses the bundled ASN data knows.
const COMCAST = (i: number) => `73.162.${Math.floor(i / 200)}.${(i % 200) + 1}`
const TELEKOM = (i: number) => `79.200.${Math.floor(i / 200)}.${(i % 200) + 1}`
/** Core signals alone reach the block threshold (45 + 45): bad for the ASN. */
const BAD_DEVICE = { is_headless: true, is_tampered: true }

type Scored = {
  event_id: string
  verdict: string
  reasons: string[]
  checks: { reason: string; evidence: Record<string, unknown> }[]
}

let h: Harness
afterEach(async () => {
  await h?.close()
})

let n = 0
const score = async (t: TestTenant, payload: Record<string, unknown>): Promise<Scored> => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/score',
    headers: t.headers,
    payload: { event: 'signup', user_id: `person-${++n}`, ...payload },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}
const label = async (t: TestTenant, eventId: string, kind = 'fraud') => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/label',
    headers: t.headers,
    payload: { label: kind, event_id: eventId },
  })
  expect(res.statusCode, res.body).toBe(200)
}
const abusive = (s: Scored) => s.checks.find((c) => c.reason === 'abusive_asn')
const badCount = async (asn: number) =>
  Number(
    (await h.store.db.get<{ n: number }>('SELECT SUM(bad) AS n FROM asn_daily WHERE asn = ?', [asn]))?.n ?? 0,
  )

describe('ASN fraud rates count only events that are bad on their own signals', () => {
  it('abusive_asn cannot keep its own ASN flagged: blocks it caused are not bad', async () => {
    h = await build()
    const t = await h.tenant({ shareNetwork: true, rateLimit: 100_000 })
    let ip = 0
    // 60 events, 20 of them blocked by their own device signals: 33 % bad.
    for (let i = 0; i < 60; i++)
      await score(t, { ip: COMCAST(ip++), ...(i < 20 ? { device: BAD_DEVICE } : {}) })
    await h.jobs.runNow('asn-rates')
    // A disposable address (35) alone is an allow; with abusive_asn (35) it is a block.
    const tipped: Scored[] = []
    for (let i = 0; i < 10; i++)
      tipped.push(await score(t, { ip: COMCAST(ip++), email: `shopper${i}@mailinator.com` }))
    for (const s of tipped) {
      expect(s.verdict).toBe('block')
      expect(abusive(s)?.evidence).toMatchObject({ asn: 7922 })
      expect(s.reasons).toContain('disposable_email')
    }
    await h.jobs.runNow('asn-rates')
    // 20 bad of 70: below 30 %, so the ASN is no longer flagged and the same kind of event is allowed again.
    const after = await score(t, { ip: COMCAST(ip++), email: 'shopper99@mailinator.com' })
    expect(abusive(after)).toBeUndefined()
    expect(after.verdict).toBe('allow')
    for (let i = 0; i < 40; i++) await score(t, { ip: COMCAST(ip++), email: `later${i}@mailinator.com` })
    await h.jobs.runNow('asn-rates')
    expect(abusive(await score(t, { ip: COMCAST(ip++) }))).toBeUndefined()
    expect(await badCount(7922)).toBe(20)
  })

  it("a tenant's blocklist hits never flag an ASN", async () => {
    h = await build()
    const t = await h.tenant({ shareNetwork: true, rateLimit: 100_000 })
    const rows = Array.from({ length: 60 }, (_, i) => ({ list: 'block', type: 'user', value: `listed-${i}` }))
    const added = await h.app.inject({
      method: 'POST',
      url: '/v1/batch/lists',
      headers: t.headers,
      payload: { rows },
    })
    expect(added.statusCode, added.body).toBe(200)
    for (let i = 0; i < 60; i++) {
      const s = await score(t, { ip: TELEKOM(i), user_id: `listed-${i}` })
      expect(s.verdict).toBe('block')
      expect(s.reasons).toContain('blocklisted_user')
    }
    await h.jobs.runNow('asn-rates')
    const other = await h.tenant({ shareNetwork: true })
    expect(abusive(await score(other, { ip: TELEKOM(500) }))).toBeUndefined()
    expect(abusive(await score(t, { ip: TELEKOM(501) }))).toBeUndefined()
    expect(await badCount(3320)).toBe(0)
  })

  it('fraud and chargeback labels make an event bad, once however often it is labelled', async () => {
    h = await build()
    const t = await h.tenant({ shareNetwork: true, rateLimit: 100_000 })
    const ids: string[] = []
    for (let i = 0; i < 60; i++) ids.push((await score(t, { ip: COMCAST(i) })).event_id)
    await h.jobs.runNow('asn-rates')
    expect(abusive(await score(t, { ip: COMCAST(900) }))).toBeUndefined()
    // 17 labelled of 61: under 30 %. Labelled again (fraud twice, then chargeback) they still count once.
    for (const id of ids.slice(0, 17)) await label(t, id)
    for (const id of ids.slice(0, 17)) await label(t, id)
    for (const id of ids.slice(0, 5)) await label(t, id, 'chargeback')
    expect(await badCount(7922)).toBe(17)
    await h.jobs.runNow('asn-rates')
    expect(abusive(await score(t, { ip: COMCAST(901) }))).toBeUndefined()
    // Two more make 19 of 62: over 30 %.
    for (const id of ids.slice(17, 19)) await label(t, id, 'chargeback')
    await h.jobs.runNow('asn-rates')
    expect(abusive(await score(t, { ip: COMCAST(902) }))?.evidence).toMatchObject({
      asn: 7922,
      events: 62,
      fraud_rate: Math.round((19 / 62) * 1000) / 1000,
    })
    // A legit label is not a fraud outcome.
    await label(t, ids[30]!, 'legit')
    expect(await badCount(7922)).toBe(19)
  })

  it("a non-sharing tenant's events count for its own rate only", async () => {
    h = await build()
    const closed = await h.tenant({ shareNetwork: false, rateLimit: 100_000 })
    const shared = await h.tenant({ shareNetwork: true, rateLimit: 100_000 })
    const closedToo = await h.tenant({ shareNetwork: false })
    for (let i = 0; i < ASN_MIN_EVENTS + 10; i++)
      await score(closed, { ip: COMCAST(i), ...(i < 20 ? { device: BAD_DEVICE } : {}) })
    await h.jobs.runNow('asn-rates')
    expect(abusive(await score(closed, { ip: COMCAST(900) }))?.evidence).toMatchObject({
      asn: 7922,
      events: 60,
    })
    expect(abusive(await score(shared, { ip: COMCAST(901) }))).toBeUndefined()
    expect(abusive(await score(closedToo, { ip: COMCAST(902) }))).toBeUndefined()
    // The shared rate counts for everyone, the non-sharing tenant included: 20 bad of 61 own + 61 shared events.
    for (let i = 0; i < 60; i++) await score(shared, { ip: COMCAST(1000 + i) })
    await h.jobs.runNow('asn-rates')
    const mixed = await score(closed, { ip: COMCAST(903) })
    expect(abusive(mixed)).toBeUndefined()
    expect(abusive(await score(shared, { ip: COMCAST(904) }))).toBeUndefined()
  })
})
