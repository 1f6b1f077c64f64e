import { afterEach, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { JA4_MIN_SESSIONS, JA4_MIN_SHARE } from '../../src/services/devices/ja4-signatures.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

/**
 * JA4 over HTTP: the edge header (VERDICT_JA4_HEADER through a trusted proxy) on the beacon, the joined
 * beacon's JA4 in the score (`device.ja4`, `ja4_known_tool`, `forged_beacon`), and the spoofing
 * signatures the background job derives from the deployment's beacons (`known_spoof_signature`).
 * test/tls/beacon-https.test.ts does the same through verdict's own HTTPS listener.
 */
const hasPg = await pgAvailable()

const SHOP = 'https://shop.example'
const EDGE = '10.0.0.1'
const HEADER = 'x-client-ja4'
const CURL = 't13d3112h2_e8f1e7e78f70_b26ce05bbdd6'
const NODE_FETCH = 't13d5911h1_a33745022dd6_1f22a2ca17c4'
const CHROMIUM = 't13d1517h2_8daaf6152771_cb7bf5808d99'
/** A JA4 that no table names: the spoofing toolkit's own TLS stack, say. */
const SPOOFY = 't13d1715h2_5b57614c22b0_3d5424432f57'
const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

const clean = () => ({
  ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
  antidetect_score: 0,
  antidetect_confidence: 'low',
})
const tampered = () => ({ ...clean(), is_tampered: true })

let h: Harness
let t: TestTenant
let pk: string
let n = 0

afterEach(async () => {
  await h?.close()
})

async function setUp(engine: Engine = 'sqlite') {
  h = await build({ engine, trustProxy: [EDGE], ja4Header: HEADER })
  t = await h.tenant()
  pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
}

/** The client address each device_id last beaconed from. */
const sentFrom = new Map<string, string>()
const deviceId = () => (++n).toString(16).padStart(64, 'c')
/** A distinct client address per beacon, so the per-IP beacon limit never interferes. */
const clientIp = () => `73.162.${(n >> 8) & 255}.${(n & 255) + 1}`

/** One beacon through the edge, which passes the JA4 in its header. */
async function beacon(ja4: string | null, device: object, id = deviceId(), from = EDGE) {
  const ip = clientIp()
  // The score binds to a beacon from its own IP's network: it sends the address the beacon came from.
  sentFrom.set(id, from === EDGE ? ip : from)
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/beacon',
    headers: {
      'x-api-key': pk,
      origin: SHOP,
      'user-agent': CHROME_MAC,
      'x-forwarded-for': ip,
      ...(ja4 === null ? {} : { [HEADER]: ja4 }),
    },
    payload: { device_id: id, device },
    remoteAddress: from,
  })
  expect(res.statusCode, res.body).toBe(200)
  return id
}

async function score(id: string, extra: object = {}) {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/score',
    headers: t.headers,
    payload: { event: 'signup', user_id: `u-${id.slice(-6)}`, device_id: id, ip: sentFrom.get(id), ...extra },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as {
    score: number
    verdict: string
    reasons: string[]
    checks: { reason: string; weight: number; check: string; evidence: Record<string, unknown> }[]
    device: { ja4: boolean; ja4_known_tool: string | null }
  }
}

const flagged = async () => (await h.store.ja4.signatures()).map((s) => s.ja4)
const runJobs = async () => {
  expect(await h.jobs.runNow('ja4-signatures')).toBe(true)
  expect(await h.jobs.runNow('ja4-signatures-cache')).toBe(true)
}

describe('the JA4 of the beacon in the score', () => {
  it('curl and Node fetch: ja4_known_tool is set and forged_beacon fires at 45, review not block', async () => {
    await setUp()
    for (const [ja4, tool] of [
      [CURL, 'curl'],
      [NODE_FETCH, 'node-fetch'],
    ] as const) {
      const id = await beacon(ja4, clean())
      expect((await h.store.beacons.latest(t.tenantId, id, 0))?.ja4).toBe(ja4)
      const r = await score(id)
      expect(r.device).toMatchObject({ ja4: true, ja4_known_tool: tool })
      const forged = r.checks.find((c) => c.reason === 'forged_beacon')
      expect(forged).toMatchObject({ weight: 45, check: 'deviceIntegrity', evidence: { ja4, tool } })
      expect(r.reasons).toEqual(['forged_beacon'])
      expect(r).toMatchObject({ score: 45, verdict: 'review' })
    }
  })

  it('Chromium: the JA4 is captured (ja4 true) and nothing fires', async () => {
    await setUp()
    const id = await beacon(CHROMIUM, clean())
    const r = await score(id)
    expect(r.device).toMatchObject({ ja4: true, ja4_known_tool: null })
    expect(r.reasons).toEqual([])
  })

  it('believes the header only from the trusted edge and only as a well-formed JA4', async () => {
    await setUp()
    const direct = await beacon(CURL, clean(), deviceId(), '198.51.100.7')
    const malformed = await beacon('curl-please-trust-me', clean())
    const none = await beacon(null, clean())
    for (const id of [direct, malformed, none]) {
      expect((await h.store.beacons.latest(t.tenantId, id, 0))?.ja4).toBeNull()
      const r = await score(id)
      expect(r.device).toMatchObject({ ja4: false, ja4_known_tool: null })
      expect(r.reasons).not.toContain('forged_beacon')
    }
  })

  it('lists the JA4 with the beacon in the subject export', async () => {
    await setUp()
    const id = await beacon(CURL, clean())
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/subject',
      headers: t.headers,
      payload: { device_id: id },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().beacons).toEqual([expect.objectContaining({ deviceId: id, ja4: CURL })])
  })

  it('joins only a beacon of the last 30 minutes; a device without one has no JA4', async () => {
    await setUp()
    const id = await beacon(CURL, clean())
    h.clock.advance(31 * 60_000)
    const r = await score(id)
    expect(r.device).toMatchObject({ ja4: false, ja4_known_tool: null })
    expect(r.reasons).not.toContain('forged_beacon')
  })
})

/** `sessions` beacons with the JA4, the first `spoofing` of them tampered. */
async function beacons(ja4: string, sessions: number, spoofing: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < sessions; i++) ids.push(await beacon(ja4, i < spoofing ? tampered() : clean()))
  return ids
}

const spoofingSignatures = (engine: Engine) => {
  it('fires known_spoof_signature (35) once the job flagged a JA4, and not below the thresholds', async () => {
    await setUp(engine)
    expect(JA4_MIN_SESSIONS).toBe(50)
    expect(JA4_MIN_SHARE).toBe(0.7)
    const OTHER = 't13d1715h2_5b57614c22b0_000000000001'
    const FEW = 't13d1715h2_5b57614c22b0_000000000002'
    const spoofy = await beacons(SPOOFY, 50, 35) // 50 beacons, 70 %: flagged
    const other = await beacons(OTHER, 60, 41) // 68 %: not
    const few = await beacons(FEW, 49, 48) // 98 %, one beacon short: not
    await beacons(CURL, 50, 50) // a known tool: forged_beacon's, never a signature

    // Counted as the beacons came in, per day and JA4.
    const tallies = Object.fromEntries((await h.store.ja4.tallies(0)).map((x) => [x.ja4, x]))
    expect(tallies[SPOOFY]).toEqual({ ja4: SPOOFY, sessions: 50, spoofing: 35 })
    expect(tallies[OTHER]).toMatchObject({ sessions: 60, spoofing: 41 })

    // Not on the request path: nothing fires before the job ran.
    const cleanOne = spoofy.at(-1)!
    expect((await score(cleanOne)).reasons).toEqual([])

    await runJobs()
    expect(await flagged()).toEqual([SPOOFY])
    const r = await score(cleanOne)
    expect(r.device).toMatchObject({ ja4: true, ja4_known_tool: null })
    const hit = r.checks.find((c) => c.reason === 'known_spoof_signature')
    expect(hit).toMatchObject({ weight: 35, check: 'deviceIntegrity' })
    expect(hit?.evidence).toMatchObject({ ja4: SPOOFY, sessions: 50, spoofing: 35, min_sessions: 50 })
    expect(r).toMatchObject({ score: 35, verdict: 'allow' })
    for (const id of [other.at(-1)!, few.at(-1)!]) expect((await score(id)).reasons).toEqual([])
    expect((await score(await beacon(CURL, clean()))).reasons).toEqual(['forged_beacon'])

    // A JA4 that stops being predominantly spoofing is dropped at the next run.
    await beacons(SPOOFY, 20, 0)
    await runJobs()
    expect(await flagged()).toEqual([])
    expect((await score(await beacon(SPOOFY, clean()))).reasons).toEqual([])
  })

  it('keeps no count past the window or of a deleted tenant', async () => {
    await setUp(engine)
    await beacons(SPOOFY, 50, 50)
    await runJobs()
    expect(await flagged()).toEqual([SPOOFY])
    // A tenant's deletion takes its counts with it; the next run drops the signature they made.
    const rows = await h.store.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM ja4_daily')
    expect(Number(rows[0]?.n)).toBe(1)
    await h.store.tenants.delete(t.tenantId)
    expect(await h.store.ja4.tallies(0)).toEqual([])
    await runJobs()
    expect(await flagged()).toEqual([])

    // Days older than the window (30 days, or the retention period if shorter) are deleted by the job.
    t = await h.tenant()
    pk = (await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [SHOP] } })).apiKey
    await beacons(SPOOFY, 50, 50)
    await runJobs()
    expect(await flagged()).toEqual([SPOOFY])
    h.clock.advance(32 * 86_400_000)
    await runJobs()
    expect(await h.store.ja4.tallies(0)).toEqual([])
    expect(await flagged()).toEqual([])
  })
}

describe('spoofing signatures (SQLite)', () => spoofingSignatures('sqlite'))
describe.skipIf(!hasPg)('spoofing signatures (PostgreSQL)', () => spoofingSignatures('postgres'))
