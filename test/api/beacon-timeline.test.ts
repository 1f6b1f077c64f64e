import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { scoreOk } from '../helpers/device.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

const SHOP = 'https://shop.example'
// IPs whose class the test intel knows (as in device.test.ts).
const DATACENTER = '8.8.8.8'
const RESIDENTIAL = '73.162.10.20'
const RELAY = '172.225.10.1'
const VPN = '185.65.134.7'
const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

/** A fingerprint as the beacon library sends it: 64 hex digits. */
const fp = (name: string) => createHash('sha256').update(name).digest('hex')

/** A clean beacon: no integrity finding, so only session behaviour can fire. */
const cleanDevice = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
  antidetect_score: 0,
  antidetect_confidence: 'low',
})

type Body = {
  device?: Record<string, unknown>
  device_token: string
  reasons: string[]
  checks: { reason: string; weight: number; evidence: Record<string, unknown> }[]
}

describe.each<Engine>(['sqlite', 'postgres'])('watch-mode beacons on the device timeline (%s)', (engine) => {
  let h: Harness
  let t: TestTenant
  let pk: string
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  /** Each fingerprint's watch session as its page keeps it: the first visit, and the latest one. */
  let sessions = new Map<string, { first: string; last: string }>()
  const setup = async () => {
    sessions = new Map()
    h = await build({ engine })
    t = await h.tenant()
    pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
  }
  /**
   * One watch-mode beacon of `fp` from the browser at `ip`, as the library sends it (from the second on,
   * naming the watch's first visit), then the watch interval passes.
   */
  const beacon = async (deviceId: string, ip: string, key = pk, intervalMs = 60_000) => {
    const s = sessions.get(deviceId)
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'x-api-key': key, origin: SHOP, 'user-agent': CHROME_MAC },
      payload: { device_id: deviceId, device: cleanDevice(), ...(s ? { watch_of: s.first } : {}) },
      remoteAddress: ip,
    })
    expect(res.statusCode, res.body).toBe(200)
    const visit = res.json().visit_id as string
    sessions.set(deviceId, { first: s?.first ?? visit, last: visit })
    h.clock.advance(intervalMs)
    return visit
  }
  /** A score as the shop's backend sends it: with the latest visit id its page got, when it has one. */
  const score = (payload: Record<string, unknown>, headers = t.headers) => {
    const s = typeof payload['device_id'] === 'string' ? sessions.get(payload['device_id']) : undefined
    return scoreOk<Body>(h, headers, { event: 'checkout', ...(s ? { visit_id: s.last } : {}), ...payload })
  }
  const check = (b: Body, reason: string) => b.checks.find((c) => c.reason === reason)

  run('stores the connection class of each beacon, like a scored IP', async () => {
    await setup()
    for (const ip of [RESIDENTIAL, DATACENTER, VPN, RELAY]) await beacon(fp('class'), ip)
    await beacon(fp('class'), '10.1.2.3')
    const rows = await h.store.db.all<{ connection_type: string | null }>(
      'SELECT connection_type FROM beacon_observations WHERE device_id = ? ORDER BY created_ms',
      [fp('class')],
    )
    expect(rows.map((r) => r.connection_type)).toEqual([
      'residential',
      'datacenter',
      'proxy',
      'relay',
      'residential',
    ])
  })

  run('vpn_drop and ip_cloaking fire on the next score from what the browser did mid-session', async () => {
    await setup()
    // Residential, then a VPN mid-session (beacons only), then checkout from the home address.
    await beacon(fp('drop'), RESIDENTIAL)
    await beacon(fp('drop'), VPN)
    const drop = await score({ device_id: fp('drop'), ip: RESIDENTIAL })
    expect(drop.device).toMatchObject({ resolution_rung: 2 })
    expect(check(drop, 'vpn_drop')).toMatchObject({
      weight: 40,
      evidence: { from: 'proxy', to: 'residential', session_minutes: 2 },
    })
    // The same score without the beacons has nothing to compare with.
    expect((await score({ device_id: fp('quiet'), ip: RESIDENTIAL })).reasons).not.toContain('vpn_drop')

    // Residential in the watch beacons, then the score from a datacenter.
    await beacon(fp('cloak'), RESIDENTIAL)
    await beacon(fp('cloak'), RESIDENTIAL)
    const cloak = await score({ device_id: fp('cloak'), ip: DATACENTER })
    expect(check(cloak, 'ip_cloaking')).toMatchObject({ weight: 30, evidence: { from: 'residential' } })
  })

  run('on rung 1 the beacons of the fingerprint join the token timeline', async () => {
    await setup()
    const login = await score({ device_id: fp('r1'), ip: RESIDENTIAL })
    h.clock.advance(60_000)
    await beacon(fp('r1'), DATACENTER)
    const pay = await score({ device_id: fp('r1'), ip: RESIDENTIAL, device_token: login.device_token })
    expect(pay.device).toMatchObject({ resolution_rung: 1, resolved_id: login.device?.['resolved_id'] })
    expect(check(pay, 'vpn_drop')?.evidence).toMatchObject({ from: 'datacenter', to: 'residential' })
    // A token without the fingerprint reads no beacons: the fingerprint is what the beacon carries.
    const other = await score({ device_id: fp('r1b'), ip: RESIDENTIAL })
    h.clock.advance(60_000)
    await beacon(fp('r1b'), DATACENTER)
    const tokenOnly = await score({ ip: RESIDENTIAL, device_token: other.device_token })
    expect(tokenOnly.reasons).not.toContain('vpn_drop')
  })

  run('device_ip_hopping counts beacon IPs; privacy relays are exempt', async () => {
    await setup()
    for (let i = 21; i <= 24; i++) await beacon(fp('hop'), `73.162.10.${i}`)
    const hop = await score({ device_id: fp('hop'), ip: '73.162.10.25' })
    expect(check(hop, 'device_ip_hopping')).toMatchObject({ weight: 25, evidence: { distinct_ips: 5 } })

    // Relay hops count neither as the risky side, nor as the new address, nor as an IP.
    await beacon(fp('relay'), RELAY)
    expect((await score({ device_id: fp('relay'), ip: RESIDENTIAL })).reasons).not.toContain('vpn_drop')
    await beacon(fp('relay2'), RESIDENTIAL)
    await beacon(fp('relay2'), RELAY)
    expect((await score({ device_id: fp('relay2'), ip: RELAY })).reasons).not.toContain('ip_cloaking')
    for (const ip of ['73.162.10.21', '172.225.10.2', '73.162.10.22', '172.225.10.3', '73.162.10.23'])
      await beacon(fp('relay3'), ip)
    expect((await score({ device_id: fp('relay3'), ip: '73.162.10.24' })).reasons).not.toContain(
      'device_ip_hopping',
    )
  })

  run('beacons are not events: no device_velocity, and a 30-minute gap ends the session', async () => {
    await setup()
    // 24 beacons in under 10 minutes (a 25-second watch interval) count for session behaviour only.
    for (let i = 0; i < 24; i++) await beacon(fp('busy'), RESIDENTIAL, pk, 25_000)
    expect((await score({ device_id: fp('busy'), ip: RESIDENTIAL })).reasons).not.toContain('device_velocity')

    await beacon(fp('gap'), VPN)
    h.clock.advance(30 * 60_000)
    expect((await score({ device_id: fp('gap'), ip: RESIDENTIAL })).reasons).not.toContain('vpn_drop')
  })

  run("ignores another tenant's beacons and scores without a network (rung 3)", async () => {
    await setup()
    const other = await h.tenant()
    const otherPk = (await issueKey(h.store, h.clock, other.tenantId, { publishable: { origins: [SHOP] } }))
      .apiKey
    await beacon(fp('t'), VPN, otherPk)
    expect((await score({ device_id: fp('t'), ip: RESIDENTIAL })).reasons).not.toContain('vpn_drop')
    await beacon(fp('3'), VPN)
    const rung3 = await score({ device_id: fp('3') })
    expect(rung3.device).toMatchObject({ resolution_rung: 3 })
    expect(rung3.reasons).not.toContain('vpn_drop')
  })

  // Issue 26: the publishable key and the allowed origin are public, so anybody can send beacons for a
  // victim's fingerprint. Only the beacons of the watch session the score names are timeline points.
  run('a forged watch beacon is no point of the timeline; a score without visit_id reads none', async () => {
    await setup()
    const victim = fp('victim')
    const visit = await beacon(victim, RESIDENTIAL)
    await beacon(victim, RESIDENTIAL)
    // The attacker beacons the victim's fingerprint from a VPN: a session of its own, and one naming a
    // made-up first visit.
    for (const watch_of of [undefined, 'vis_0123456789abcdef']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/beacon',
        headers: { 'x-api-key': pk, origin: SHOP, 'user-agent': CHROME_MAC },
        payload: { device_id: victim, device: cleanDevice(), ...(watch_of ? { watch_of } : {}) },
        remoteAddress: VPN,
      })
      expect(res.statusCode, res.body).toBe(200)
    }
    h.clock.advance(60_000)
    const forged = await score({ device_id: victim, ip: RESIDENTIAL })
    expect(forged.reasons).not.toContain('vpn_drop')
    h.clock.advance(60_000)
    // The victim's own page switching to the VPN does count, through its session, with any of its
    // visits (here the first).
    await beacon(victim, VPN)
    const real = await score({ device_id: victim, ip: RESIDENTIAL, visit_id: visit })
    expect(check(real, 'vpn_drop')).toBeDefined()
    // Without a visit id the timeline has no beacon points at all.
    await beacon(fp('bare'), RESIDENTIAL)
    await beacon(fp('bare'), VPN)
    const bare = await scoreOk<Body>(h, t.headers, {
      event: 'checkout',
      device_id: fp('bare'),
      ip: RESIDENTIAL,
    })
    expect(bare.reasons).not.toContain('vpn_drop')
    // watch_of must look like a visit id.
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/beacon',
      headers: { 'x-api-key': pk, origin: SHOP },
      payload: { device_id: victim, device: cleanDevice(), watch_of: 'x' },
      remoteAddress: RESIDENTIAL,
    })
    expect(bad.statusCode).toBe(400)
  })
})
