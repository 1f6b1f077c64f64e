import { afterEach, describe, expect, it } from 'vitest'
import {
  COLLISION_MIN_SAMPLE,
  collisionRiskFor,
  measureCollisionRisk,
  PRIOR_COLLISION_RISK,
  TOKEN_COLLISION_RISK,
} from '../../src/services/devices/device.js'
import { TOKEN_VALIDITY_MS } from '../../src/services/devices/device-token.js'
import { ALL_TRAFFIC } from '../../src/store/devices/devices.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { carriedIdentity, scoreOk } from '../helpers/device.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

const DATACENTER = '8.8.8.8'
const RESIDENTIAL = '73.162.10.20'
const RELAY = '172.225.10.1'
const VPN = '185.65.134.7'

const PROFILE_KEYS = [
  'id',
  'resolved_id',
  'resolution',
  'resolution_rung',
  'collision_risk',
  'risk_measured',
  'token_rejected',
  'account_count',
  'account_count_same_network',
  'distinct_ips',
  'unique',
  'connection_type',
  'os',
  'browser',
  'mobile',
  'is_headless',
  'ua_consistent',
  'is_emulated',
  'is_noise_injected',
  'is_tampered',
  'is_context_mismatch',
  'is_engine_mismatch',
  'is_os_mismatch',
  'timezone',
  'ja4',
  'ja4_known_tool',
]

type Body = {
  device?: Record<string, unknown>
  device_token: string
  reasons: string[]
  checks: { reason: string; weight: number; evidence: Record<string, unknown> }[]
  event_id: string
}

describe.each<Engine>(['sqlite', 'postgres'])('device identity on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  const score = (payload: Record<string, unknown>, headers = t.headers) =>
    scoreOk<Body>(h, headers, { event: 'login', ...payload })
  /** The identity the response's device token carries. */
  const carried = (b: Body) => carriedIdentity(h, t.tenantId, b.device_token)
  const weight = (b: Body, reason: string) => b.checks.find((c) => c.reason === reason)?.weight
  const observations = async (id: string, q = '', headers = t.headers) => {
    const res = await h.app.inject({ url: `/v1/device/${encodeURIComponent(id)}/observations${q}`, headers })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  run(
    'resolves rung 2 on a fingerprint and an IP, rung 1 on a replayed token, rung 3 otherwise',
    async () => {
      await setup()
      const first = await score({ device_id: 'fp-1', ip: RESIDENTIAL, user_id: 'u1' })
      expect(first.device).toMatchObject({
        id: 'fp-1',
        resolution: 'probabilistic',
        resolution_rung: 2,
        token_rejected: null,
        risk_measured: false,
        collision_risk: PRIOR_COLLISION_RISK,
      })
      // The reported identity is the one the returned token carries.
      expect(first.device?.['resolved_id']).toMatch(/^dv_/)
      expect(first.device?.['resolved_id']).toBe(carried(first))
      expect(first.device_token).toMatch(/^dt1\./)

      h.clock.advance(1000)
      const second = await score({ device_id: 'fp-1', device_token: first.device_token, ip: RESIDENTIAL })
      expect(second.device).toMatchObject({
        resolution: 'deterministic',
        resolution_rung: 1,
        token_rejected: null,
      })
      expect(second.device?.['collision_risk']).toBe(TOKEN_COLLISION_RISK)
      expect(second.device?.['resolved_id']).toBe(first.device?.['resolved_id'])
      expect(second.device_token).not.toBe(first.device_token)
      h.clock.advance(1000)
      // The re-signed token carries the same identity; a token alone (no fingerprint) still resolves.
      const third = await score({ device_token: second.device_token })
      expect(third.device).toMatchObject({
        id: null,
        resolution_rung: 1,
        resolved_id: second.device?.['resolved_id'],
      })

      // Neither: no device object, a fresh token for a new identity each time, which links nothing.
      const bare1 = await score({ user_id: 'x' })
      const bare2 = await score({ user_id: 'x' })
      expect(bare1.device).toBeUndefined()
      expect(bare1.device_token).toMatch(/^dt1\./)
      const r1 = (await score({ device_token: bare1.device_token })).device?.['resolved_id']
      const r2 = (await score({ device_token: bare2.device_token })).device?.['resolved_id']
      expect(r1).not.toBe(r2)
      // A rejected token without a fingerprint is rung 3: reported, and it links nothing.
      const rejected = await score({ device_token: 'not-a-token', user_id: 'u9' })
      expect(rejected.device).toMatchObject({
        id: null,
        resolution_rung: 3,
        token_rejected: 'malformed',
        collision_risk: 0,
        account_count: 1,
      })
      const again = await score({ device_token: 'not-a-token', user_id: 'u9' })
      expect(again.device?.['resolved_id']).not.toBe(rejected.device?.['resolved_id'])
    },
  )

  run('reports each token_rejected value and falls back to the fingerprint', async () => {
    await setup()
    const other = await h.tenant()
    const firstVisit = await score({ device_id: 'fp-t', ip: RESIDENTIAL })
    const issued = firstVisit.device_token
    const foreign = (await score({ device_id: 'fp-t', ip: RESIDENTIAL }, other.headers)).device_token
    const sig = issued.slice(-43)
    const flipped = issued.slice(0, -43) + (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)
    const cases: [string, string][] = [
      ['garbage', 'malformed'],
      [issued.slice(0, -1), 'malformed'],
      [flipped, 'bad_signature'],
      [foreign, 'bad_signature'],
    ]
    for (const [token, reason] of cases) {
      const b = await score({ device_id: 'fp-t', device_token: token, ip: RESIDENTIAL })
      expect(b.device, reason).toMatchObject({ token_rejected: reason, resolution_rung: 2, id: 'fp-t' })
      // Rung 2 on the same network: the identity issued there before.
      expect(b.device?.['resolved_id']).toBe(firstVisit.device?.['resolved_id'])
    }
    h.clock.advance(TOKEN_VALIDITY_MS)
    expect((await score({ device_id: 'fp-t', device_token: issued })).device).toMatchObject({
      token_rejected: null,
      resolution_rung: 1,
    })
    h.clock.advance(1)
    expect((await score({ device_id: 'fp-t', device_token: issued, ip: RESIDENTIAL })).device).toMatchObject({
      token_rejected: 'expired',
      resolution_rung: 2,
    })
  })

  run('returns the full device profile whenever a device_id is sent', async () => {
    await setup()
    const b = await score({
      device_id: 'fp-p',
      ip: DATACENTER,
      user_id: 'u1',
      timezone: 'America/New_York',
      device: { is_headless: true, ua_consistent: true },
    })
    expect(Object.keys(b.device ?? {}).sort()).toEqual([...PROFILE_KEYS].sort())
    expect(b.device).toMatchObject({
      connection_type: 'datacenter',
      os: null,
      browser: null,
      mobile: null,
      is_headless: true,
      ua_consistent: true,
      is_tampered: null,
      timezone: 'America/New_York',
      ja4: false,
      ja4_known_tool: null,
      account_count: 1,
      account_count_same_network: 1,
      distinct_ips: 1,
      unique: true,
    })
    const c = await score({ device_id: 'fp-p', ip: RESIDENTIAL, user_id: 'u1' })
    expect(c.device).toMatchObject({
      connection_type: 'residential',
      distinct_ips: 2,
      unique: false,
      account_count: 1,
    })
    expect((await score({ device_id: 'fp-p' })).device).toMatchObject({
      connection_type: null,
      timezone: null,
    })
    expect((await score({ ip: RESIDENTIAL })).device).toBeUndefined()
  })

  run(
    'device_reuse: fingerprint tiers across networks, corroborated on one network and at rung 1',
    async () => {
      await setup()
      // Four accounts on one fingerprint, each from another network: low then medium, never corroborated.
      const spread = []
      for (let i = 1; i <= 4; i++)
        spread.push(await score({ device_id: 'fp-r', user_id: `a${i}`, ip: `79.200.${i}.1` }))
      expect(spread.map((b) => weight(b, 'device_reuse'))).toEqual([undefined, 15, 15, 30])
      expect(spread[3]?.device).toMatchObject({ account_count: 4, account_count_same_network: 1 })
      // Three accounts on one fingerprint and one network: corroborated from the third.
      const same = []
      for (let i = 1; i <= 3; i++)
        same.push(await score({ device_id: 'fp-n', user_id: `n${i}`, ip: RESIDENTIAL }))
      expect(same.map((b) => weight(b, 'device_reuse'))).toEqual([undefined, 15, 25])
      expect(same[2]?.checks.find((c) => c.reason === 'device_reuse')?.evidence).toMatchObject({
        corroborated: true,
        accounts: 3,
        accounts_same_network: 3,
      })
      // The same account again adds no account.
      expect(
        (await score({ device_id: 'fp-n', user_id: 'n1', ip: RESIDENTIAL })).device?.['account_count'],
      ).toBe(3)
      // Rung 1: accounts on the token identity, corroborated.
      let token = (await score({ user_id: 'k1' })).device_token
      const replay = []
      for (let i = 1; i <= 4; i++) {
        const b = await score({ device_token: token, user_id: `k${i}`, ip: `79.201.${i}.1` })
        token = b.device_token
        replay.push(b)
      }
      expect(replay.map((b) => weight(b, 'device_reuse'))).toEqual([undefined, 25, 25, 40])
      // High tier at 10 accounts: 45 alone, 55 corroborated, never a block on its own.
      let high: Body | undefined
      for (let i = 1; i <= 10; i++)
        high = await score({ device_id: 'fp-h', user_id: `h${i}`, ip: `73.162.10.${30 + (i % 3)}` })
      expect(weight(high!, 'device_reuse')).toBe(55)
      expect(high!.reasons).toEqual(['device_reuse'])
      expect((high as unknown as { verdict: string }).verdict).toBe('review')
    },
  )

  run('device_reuse tiers and weights follow the tenant config', async () => {
    await setup()
    const put = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: {
        weights: { deviceReuseLow: 5, deviceReuseMed: 11, deviceReuseHigh: 21 },
        thresholds: { deviceReuseMed: 3, deviceReuseHigh: 4 },
      },
    })
    expect(put.statusCode).toBe(200)
    const w = []
    for (let i = 1; i <= 4; i++)
      w.push(
        weight(await score({ device_id: 'fp-c', user_id: `c${i}`, ip: `79.200.${i}.1` }), 'device_reuse'),
      )
    expect(w).toEqual([undefined, 5, 11, 21])
  })

  run('device_velocity: 20 events on the resolved device in 10 minutes', async () => {
    await setup()
    const got: (number | undefined)[] = []
    for (let i = 1; i <= 20; i++) {
      got.push(weight(await score({ device_id: 'fp-v', ip: RESIDENTIAL }), 'device_velocity'))
      h.clock.advance(25_000)
    }
    expect(got.slice(0, 19).every((w) => w === undefined)).toBe(true)
    expect(got[19]).toBe(25)
    // Ten minutes later the early events have left the window.
    h.clock.advance(5 * 60_000)
    expect(weight(await score({ device_id: 'fp-v', ip: RESIDENTIAL }), 'device_velocity')).toBeUndefined()
  })

  run('session codes: vpn_drop, ip_cloaking, device_ip_hopping, with privacy relays exempt', async () => {
    await setup()
    const session = async (ips: string[], device: string) => {
      let token: string | undefined
      let last: Body | undefined
      for (const ip of ips) {
        last = await score({ device_id: device, ip, ...(token ? { device_token: token } : {}) })
        token = last.device_token
        h.clock.advance(60_000)
      }
      return last!
    }
    expect((await session([DATACENTER, RESIDENTIAL], 's1')).reasons).toContain('vpn_drop')
    expect(weight(await session([VPN, RESIDENTIAL], 's2'), 'vpn_drop')).toBe(40)
    expect(weight(await session([RESIDENTIAL, DATACENTER], 's3'), 'ip_cloaking')).toBe(30)
    expect(weight(await session([RESIDENTIAL, VPN], 's3b'), 'ip_cloaking')).toBe(30)
    // Relay hops never count: neither as the risky side nor as the new address.
    expect((await session([RELAY, RESIDENTIAL], 's4')).reasons).not.toContain('vpn_drop')
    expect((await session([RESIDENTIAL, RELAY], 's5')).reasons).not.toContain('ip_cloaking')
    const hop = await session(
      ['73.162.10.21', '73.162.10.22', '73.162.10.23', '73.162.10.24', '73.162.10.25'],
      's6',
    )
    expect(weight(hop, 'device_ip_hopping')).toBe(25)
    const relays = await session(
      ['73.162.10.21', '172.225.10.2', '73.162.10.22', '172.225.10.3', '73.162.10.23', '73.162.10.24'],
      's7',
    )
    expect(relays.reasons).not.toContain('device_ip_hopping')
    // A gap of 30 minutes starts a new session.
    await score({ device_id: 's8', ip: DATACENTER })
    h.clock.advance(30 * 60_000)
    expect((await score({ device_id: 's8', ip: RESIDENTIAL })).reasons).not.toContain('vpn_drop')
  })

  run('GET /v1/device/{id}/observations lists what was seen, newest first, filtered by hours', async () => {
    await setup()
    const a = await score({ device_id: 'fp-o', ip: DATACENTER, user_id: 'u1' })
    h.clock.advance(3 * 3600_000)
    const b = await score({ device_id: 'fp-o', ip: RESIDENTIAL, device_token: a.device_token })
    const all = await observations('fp-o')
    expect(all.observations).toHaveLength(2)
    expect(all.observations[0]).toEqual({
      createdMs: h.clock.now(),
      eventId: b.event_id,
      deviceId: 'fp-o',
      resolvedId: b.device?.['resolved_id'],
      rung: 1,
      resolution: 'deterministic',
      networkPrefix: '73.162.10.0/24',
      asn: expect.any(Number),
      country: 'US',
      connectionType: 'residential',
      verdict: 'allow',
    })
    expect(all.observations[1]).toMatchObject({
      eventId: a.event_id,
      rung: 2,
      connectionType: 'datacenter',
      networkPrefix: '8.8.8.0/24',
      verdict: 'review',
    })
    expect((await observations('fp-o', '?hours=2')).observations).toHaveLength(1)
    // Both visits carry one identity: the first visit's token was replayed on another network.
    expect(b.device?.['resolved_id']).toBe(a.device?.['resolved_id'])
    expect((await observations(String(b.device?.['resolved_id']))).observations).toHaveLength(2)
    expect((await observations('never-seen')).observations).toEqual([])
    const bad = await h.app.inject({ url: '/v1/device/fp-o/observations?hours=abc', headers: t.headers })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toContain('hours')
    const long = (n: number) =>
      h.app.inject({ url: `/v1/device/${'x'.repeat(n)}/observations`, headers: t.headers })
    expect((await long(256)).statusCode).toBe(200)
    expect((await long(257)).statusCode).toBe(400)
    // No raw IP is stored with the observations; the event records the resolved identity.
    const dump = JSON.stringify(await h.store.db.all('SELECT * FROM device_observations'))
    expect(dump).not.toContain(RESIDENTIAL)
    expect(dump).not.toContain(DATACENTER)
    const ev = (await h.app.inject({ url: '/v1/events', headers: t.headers })).json().events[0]
    expect(ev.resolvedDeviceId).toBe(b.device?.['resolved_id'])
  })

  run(
    'an observation whose resolved identity differs from its token identity (before version 9) is still found by the resolved one',
    async () => {
      await setup()
      const a = await score({ device_id: 'fp-v8', ip: RESIDENTIAL, user_id: 'u1' })
      h.clock.advance(60_000)
      const b = await score({ device_id: 'fp-v8', ip: DATACENTER, device_token: a.device_token })
      const resolved = String(a.device?.['resolved_id'])
      // Rows written before version 9 could carry another token identity than their resolved identity.
      await h.store.db.run('UPDATE device_observations SET token_id = ? WHERE event_id = ?', [
        'dv_older-token',
        a.event_id,
      ])
      const listed = await observations(resolved)
      expect(listed.observations.map((o: { eventId: string }) => o.eventId)).toEqual([b.event_id, a.event_id])
      expect((await observations('dv_older-token')).observations).toEqual([])
      const detail = await h.app.inject({ url: `/v1/events/${b.event_id}`, headers: t.headers })
      expect(detail.statusCode, detail.body).toBe(200)
      expect(detail.json().device.profile).toMatchObject({ observations: 2, distinctIps: 2, accounts: 1 })
    },
  )

  run('keeps device history per tenant', async () => {
    await setup()
    const other = await h.tenant()
    let token = ''
    for (let i = 1; i <= 5; i++)
      token = (await score({ device_id: 'fp-shared', user_id: `a${i}`, ip: RESIDENTIAL })).device_token
    const b = await score({ device_id: 'fp-shared', user_id: 'b1', ip: RESIDENTIAL }, other.headers)
    expect(b.device).toMatchObject({ account_count: 1, account_count_same_network: 1, distinct_ips: 1 })
    expect(b.reasons).not.toContain('device_reuse')
    expect(b.device?.['resolved_id']).not.toBe(
      (await score({ device_id: 'fp-shared' })).device?.['resolved_id'],
    )
    const seen = await observations('fp-shared', '', other.headers)
    expect(seen.observations).toHaveLength(1)
    expect(seen.observations[0].eventId).toBe(b.event_id)
    const stolen = await score({ device_token: token, user_id: 'b2' }, other.headers)
    expect(stolen.device).toMatchObject({ token_rejected: 'bad_signature', resolution_rung: 3 })
  })

  run('measures collision risk from traffic with a known truth', async () => {
    await setup()
    // 40 fingerprints: 10 are shared by two token-identified devices on different networks, 30 belong
    // to one device each.
    const visit = async (fp: string, ip: string) => {
      const first = await score({ device_id: fp, ip })
      h.clock.advance(1000)
      await score({ device_id: fp, device_token: first.device_token, ip })
      h.clock.advance(1000)
      await score({ device_id: fp, device_token: first.device_token, ip })
    }
    for (let i = 0; i < 40; i++) {
      await visit(`fp-k${i}`, RESIDENTIAL)
      if (i < 10) await visit(`fp-k${i}`, `79.202.${i}.1`)
    }
    // A fingerprint seen without a token is no sample.
    await score({ device_id: 'fp-untokened', ip: RESIDENTIAL })
    // Two devices sharing a fingerprint on one network share its rung-2 identity: the token measure
    // cannot tell them apart, so this fingerprint is a sample that did not collide (docs/device-identity.md).
    await visit('fp-same-net', VPN)
    await visit('fp-same-net', VPN)
    const small = await measureCollisionRisk(h.store, h.clock, { minSample: 42 })
    expect(small).toEqual({ rates: [], sample: 41 })
    expect((await score({ device_id: 'fp-new', ip: RESIDENTIAL })).device).toMatchObject({
      collision_risk: PRIOR_COLLISION_RISK,
      risk_measured: false,
    })
    const m = await measureCollisionRisk(h.store, h.clock, { minSample: 41 })
    expect(m.sample).toBe(41)
    expect(m.rates).toEqual([
      { platform: ALL_TRAFFIC, fingerprints: 41, collided: 10, rate: 0.2439, measuredMs: h.clock.now() },
    ])
    // Rung 2 uses the all-traffic average (the beacon does not report platforms yet): not measured per platform.
    expect((await score({ device_id: 'fp-new', ip: RESIDENTIAL })).device).toMatchObject({
      collision_risk: 0.2439,
      risk_measured: false,
    })
    const tok = (await score({ device_id: 'fp-new', ip: RESIDENTIAL })).device_token
    expect(
      (await score({ device_id: 'fp-new', device_token: tok, ip: RESIDENTIAL })).device?.['collision_risk'],
    ).toBeLessThan(0.01)
    // Stored rates survive a restart of the cache.
    const rows = await h.store.db.all<{ platform: string; rate: number }>(
      'SELECT platform, rate FROM device_collision_rates',
    )
    expect(rows.map((r) => [r.platform, Number(r.rate)])).toEqual([[ALL_TRAFFIC, 0.2439]])
  })
})

describe('collision risk per platform', () => {
  const rates = new Map([
    [ALL_TRAFFIC, { platform: ALL_TRAFFIC, fingerprints: 500, collided: 50, rate: 0.1, measuredMs: 0 }],
    ['iOS/Safari', { platform: 'iOS/Safari', fingerprints: 100, collided: 31, rate: 0.31, measuredMs: 0 }],
  ])
  it('uses the platform rate when measured, else the all-traffic average, else the prior', () => {
    expect(collisionRiskFor(rates, 2, 'iOS/Safari')).toEqual({ risk: 0.31, measured: true })
    expect(collisionRiskFor(rates, 2, 'Windows/Chrome')).toEqual({ risk: 0.1, measured: false })
    expect(collisionRiskFor(rates, 2, null)).toEqual({ risk: 0.1, measured: false })
    expect(collisionRiskFor(new Map(), 2, null)).toEqual({ risk: PRIOR_COLLISION_RISK, measured: false })
    expect(collisionRiskFor(rates, 1, 'iOS/Safari').risk).toBeLessThan(0.01)
    expect(COLLISION_MIN_SAMPLE).toBeGreaterThanOrEqual(30)
  })
})
