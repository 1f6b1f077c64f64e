import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

// Issue 26 item 4: the publishable key and the allowed origin are public, so anybody can send a beacon
// for any device_id. A score uses only the beacon of its own visit (visit_id) or, without one, a beacon
// from its own network; a forged beacon from elsewhere moves nobody's score, in either direction.
const SHOP = 'https://shop.example'
const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

/** Every integrity finding and a confident antidetect verdict: the riskiest beacon there is. */
const risky = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f !== 'ua_consistent'])),
  antidetect_score: 100,
  antidetect_confidence: 'high',
})
/** A plain browser: no finding. */
const clean = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
  antidetect_score: 0,
  antidetect_confidence: 'low',
})

let h: Harness
let t: TestTenant
let pk: string

beforeAll(async () => {
  h = await build()
  t = await h.tenant({ rateLimit: 100_000 })
  pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
})
afterAll(async () => {
  await h.close()
})

/** A beacon as curl sends it: the public key and origin, from any address. */
async function beacon(deviceId: string, device: object, from: string): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/beacon',
    headers: { 'x-api-key': pk, origin: SHOP, 'user-agent': CHROME },
    payload: { device_id: deviceId, device },
    remoteAddress: from,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().visit_id as string
}

const score = async (payload: object) => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as { score: number; verdict: string; reasons: string[]; device: Record<string, unknown> }
}

describe("a forged beacon cannot move somebody else's score", () => {
  it("a forged risky beacon from another network does not raise the victim's score", async () => {
    const victim = 'aa'.repeat(32)
    const victimIp = '81.2.69.160'
    const visit = await beacon(victim, clean(), victimIp)
    const baseline = await score({ event: 'login', device_id: victim, ip: victimIp, visit_id: visit })
    expect(baseline.verdict).toBe('allow')
    // The attacker copies the victim's fingerprint and sends the riskiest beacon, later, from elsewhere.
    const forged = await beacon(victim, risky(), '203.0.113.9')
    for (const body of [
      { event: 'login', device_id: victim, ip: victimIp, visit_id: visit },
      { event: 'login', device_id: victim, ip: victimIp },
      // Even the forged visit's id does not bind a score from another network.
      { event: 'login', device_id: victim, ip: victimIp, visit_id: forged },
    ]) {
      const s = await score(body)
      expect(s.verdict, JSON.stringify(body)).toBe('allow')
      expect(s.score).toBe(baseline.score)
      expect(s.reasons).toEqual(baseline.reasons)
    }
  })

  it('a forged clean beacon does not clear a flagged browser', async () => {
    const fraud = 'bb'.repeat(32)
    const fraudIp = '198.51.100.7'
    const visit = await beacon(fraud, risky(), fraudIp)
    const flagged = await score({ event: 'signup', device_id: fraud, ip: fraudIp, visit_id: visit })
    expect(flagged.verdict).toBe('block')
    // A clean beacon for the same fingerprint from another network, newer than the real one.
    await beacon(fraud, clean(), '192.0.2.55')
    for (const body of [
      { event: 'signup', device_id: fraud, ip: fraudIp, visit_id: visit },
      { event: 'signup', device_id: fraud, ip: fraudIp },
    ]) {
      const s = await score(body)
      expect(s.verdict, JSON.stringify(body)).toBe('block')
      expect(s.score).toBe(flagged.score)
    }
    // Even from the same network, a newer clean beacon does not replace the visit the score names.
    await beacon(fraud, clean(), '198.51.100.8')
    const bound = await score({ event: 'signup', device_id: fraud, ip: fraudIp, visit_id: visit })
    expect(bound.verdict).toBe('block')
  })
})

describe('which beacon a score uses', () => {
  it('the visit of the same IPv4 /24 or IPv6 /64, within 30 minutes, of this tenant and device_id', async () => {
    const id = 'cc'.repeat(32)
    const v4 = await beacon(id, risky(), '73.162.10.20')
    const sameNet = await score({ event: 'login', device_id: id, ip: '73.162.10.99', visit_id: v4 })
    expect(sameNet.device['os']).toBe('macOS')
    const otherNet = await score({ event: 'login', device_id: id, ip: '73.162.11.20', visit_id: v4 })
    expect(otherNet.device['os']).toBeNull()
    // Another device_id's visit is not this device's.
    const otherDevice = await score({
      event: 'login',
      device_id: 'cd'.repeat(32),
      ip: '73.162.10.20',
      visit_id: v4,
    })
    expect(otherDevice.device['os']).toBeNull()
    // No IP on the score: nothing to tie a beacon to.
    expect((await score({ event: 'login', device_id: id, visit_id: v4 })).device['os']).toBeNull()

    const id6 = 'dd'.repeat(32)
    const v6 = await beacon(id6, risky(), '2001:db8:1:2::1')
    expect(
      (await score({ event: 'login', device_id: id6, ip: '2001:db8:1:2:ffff::9', visit_id: v6 })).device[
        'os'
      ],
    ).toBe('macOS')
    expect(
      (await score({ event: 'login', device_id: id6, ip: '2001:db8:1:3::1', visit_id: v6 })).device['os'],
    ).toBeNull()
    expect((await score({ event: 'login', device_id: id6, ip: '2001:db8:1:2::77' })).device['os']).toBe(
      'macOS',
    )

    h.clock.advance(31 * 60_000)
    expect(
      (await score({ event: 'login', device_id: id, ip: '73.162.10.20', visit_id: v4 })).device['os'],
    ).toBeNull()
  })

  it('an unknown visit_id is ignored, and a malformed one refused', async () => {
    const id = 'ee'.repeat(32)
    await beacon(id, risky(), '73.162.10.20')
    const unknown = await score({
      event: 'login',
      device_id: id,
      ip: '73.162.10.20',
      visit_id: 'vis_0000000000000000',
    })
    expect(unknown.device['os']).toBeNull()
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: { event: 'login', visit_id: 'x'.repeat(200) },
    })
    expect(bad.statusCode).toBe(400)
  })

  it('a beacon is metered like a scored event, and refused over the monthly quota', async () => {
    const small = await h.tenant({ monthlyQuota: 2, rateLimit: 1000 })
    const spk = (await issueKey(h.store, h.clock, small.tenantId, { publishable: { origins: [SHOP] } }))
      .apiKey
    const send = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/beacon',
        headers: { 'x-api-key': spk, origin: SHOP },
        payload: { device_id: 'ff'.repeat(32), device: clean() },
        remoteAddress: '73.162.12.1',
      })
    expect((await send()).statusCode).toBe(200)
    expect((await send()).statusCode).toBe(200)
    const used = await h.store.db.get<{ n: number }>('SELECT sum(used) AS n FROM usage WHERE tenant_id = ?', [
      small.tenantId,
    ])
    expect(Number(used?.n)).toBe(2)
    const over = await send()
    expect(over.statusCode).toBe(429)
    const rows = await h.store.db.get<{ n: number }>(
      'SELECT count(*) AS n FROM beacon_observations WHERE tenant_id = ?',
      [small.tenantId],
    )
    expect(Number(rows?.n)).toBe(2)
  })
})
