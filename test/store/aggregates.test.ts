import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unpackJson } from '../../src/store/events/compact-json.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import {
  asnDays,
  coreScore,
  DAY,
  type EventRow,
  fingerprintMarkers,
  fingerprintTokens,
  HOUR,
  ipAccountPairs,
  ipAccountsRecount,
  linkCounts,
  linkTriples,
  type ObservationRow,
  profileFigures,
  rollup,
  seeded,
  stats,
} from '../helpers/recount.js'

const hasPg = await pgAvailable()

const SEED = 20261123
const STEPS = 220
const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'blocked-user']
const FINGERPRINTS = ['fp-a', 'fp-b', 'fp-c', 'fp-d', 'fp-e']
// Comcast (two /24s), Deutsche Telekom, a Google datacenter address, a private address (no ASN).
// The IPv6 addresses: two in one /64 (velocity counts the block), one in another /64 of the same /48.
const IPS = [
  '2001:db8:7:1::a',
  '2001:db8:7:1:1234:5678:9abc:def0',
  '2001:db8:7:2::a',
  '73.162.10.20',
  '73.162.10.21',
  '73.162.99.5',
  '79.200.1.1',
  '79.200.77.2',
  '8.8.8.8',
  '192.168.7.7',
]
const EMAILS = ['anna@example.com', 'bob@mailinator.com', 'carl.d@example.com']

type Profile = { account_count: number; account_count_same_network: number; distinct_ips: number }
interface Scored {
  eventId: string
  device?: Profile
}

/**
 * A seeded random stream over a small population: single scores and batches, device tokens replayed from
 * earlier answers (and a forged one), strong device signals now and then, a blocklisted user, fraud,
 * chargeback and legit labels (some twice), ASN-rate refreshes, and a clock that moves by seconds,
 * minutes, hours and days.
 */
async function stream(h: Harness, t: TestTenant): Promise<Scored[]> {
  const r = seeded(SEED)
  const tokens: string[] = []
  const scored: Scored[] = []
  const post = async (url: string, payload: object) => {
    const res = await h.app.inject({ method: 'POST', url, headers: t.headers, payload })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }
  await post('/v1/lists', { list: 'block', type: 'user', value: 'blocked-user' })
  const event = () => {
    const b: Record<string, unknown> = { event: r.pick(['signup', 'login', 'checkout']) }
    if (r.chance(0.8)) b['user_id'] = r.pick(USERS)
    if (r.chance(0.85)) b['ip'] = r.pick(IPS)
    if (r.chance(0.6)) b['device_id'] = r.pick(FINGERPRINTS)
    if (tokens.length && r.chance(0.35)) b['device_token'] = r.pick(tokens)
    else if (r.chance(0.03)) b['device_token'] = 'forged.token.value'
    if (r.chance(0.1)) b['device'] = { is_headless: true, is_tampered: true }
    if (r.chance(0.15)) b['email'] = r.pick(EMAILS)
    return b
  }
  const keep = (res: { event_id: string; device?: Profile; device_token: string }) => {
    scored.push({ eventId: res.event_id, ...(res.device ? { device: res.device } : {}) })
    if (res.device) tokens.push(res.device_token)
  }
  for (let step = 0; step < STEPS; step++) {
    const roll = r.next()
    if (roll < 0.7) h.clock.advance(r.int(0, 90_000))
    else if (roll < 0.9) h.clock.advance(r.int(10, 80) * 60_000 + r.int(0, 999))
    else if (roll < 0.97) h.clock.advance(r.int(2, 6) * HOUR + r.int(0, 59_999))
    else h.clock.advance(r.int(20, 40) * HOUR)
    if (r.chance(0.25)) {
      const rows = Array.from({ length: r.int(2, 5) }, event)
      for (const res of (await post('/v1/batch/score', { rows })).results) keep(res)
    } else keep(await post('/v1/score', event()))
    if (scored.length > 5 && r.chance(0.08)) {
      const target = r.pick(scored).eventId
      const label = r.pick(['fraud', 'fraud', 'chargeback', 'legit'])
      await post('/v1/label', { label, event_id: target })
      if (r.chance(0.3)) await post('/v1/label', { label: 'fraud', event_id: target })
    }
    if (r.chance(0.04)) await h.jobs.runNow('asn-rates')
  }
  return scored
}

describe.each<Engine>(['sqlite', 'postgres'])('maintained aggregates on %s against a recount', (engine) => {
  const skip = engine === 'postgres' && !hasPg
  const run = it.skipIf(skip)
  let h: Harness
  let t: TestTenant
  let scored: Scored[]
  let obs: ObservationRow[]
  let events: EventRow[]

  beforeAll(async () => {
    if (skip) return
    h = await build({ engine })
    t = await h.tenant({ shareNetwork: true, rateLimit: 1_000_000, monthlyQuota: 1_000_000 })
    h.clock.set(Date.UTC(2026, 2, 9, 21, 47, 13, 250))
    scored = await stream(h, t)
    obs = await h.store.db.all<ObservationRow>(
      `SELECT id, event_id, created_ms, device_id, token_id, rung, user_id, ip_hash, ip_prefix
         FROM device_observations WHERE tenant_id = ? ORDER BY id`,
      [t.tenantId],
    )
    events = await h.store.db.all<EventRow>(
      'SELECT id, created_ms, verdict, score, reasons, checks, asn, asn_bad, ip_hash, ip_block_hash, user_id, inputs FROM events WHERE tenant_id = ?',
      [t.tenantId],
    )
  }, 300_000)
  afterAll(async () => {
    await h?.close()
  })

  run('the stream covers what the aggregates count', () => {
    expect(events.length).toBeGreaterThan(250)
    const spanDays =
      (Math.max(...events.map((e) => Number(e.created_ms))) - Number(events[0]!.created_ms)) / DAY
    expect(spanDays).toBeGreaterThan(2)
    expect(obs.filter((o) => Number(o.rung) === 1).length).toBeGreaterThan(20)
    expect(obs.filter((o) => Number(o.rung) === 2).length).toBeGreaterThan(20)
    // Fingerprints without an IP (rung 3, linking nothing) are in the stream too.
    expect(obs.some((o) => Number(o.rung) === 3 && o.device_id !== null)).toBe(true)
    expect(obs.some((o) => o.user_id === null) && obs.some((o) => o.ip_hash === null)).toBe(true)
    expect(events.filter((e) => Number(e.asn_bad) === 1).length).toBeGreaterThan(3)
    // Both fingerprint markers (alternating tokens, a token with several accounts) are made.
    const markers = new Set(fingerprintMarkers(obs).map((m) => m.kind))
    expect([...markers].sort()).toEqual(['fm', 'fx'])
  })

  run(
    'device links: the link table holds exactly the links of the observations, and each key counts its members',
    async () => {
      const rows = await h.store.db.all<{ kind: string; key: string; member: string }>(
        'SELECT kind, key, member FROM device_links WHERE tenant_id = ?',
        [t.tenantId],
      )
      expect(new Set(rows.map((l) => `${l.kind}|${l.key}|${l.member}`))).toEqual(linkTriples(obs))
      for (const { kind, key, n } of linkCounts(obs).values()) {
        const got = await h.store.db.get<{ n: number }>(
          'SELECT COUNT(*) AS n FROM device_links WHERE tenant_id = ? AND kind = ? AND key = ?',
          [t.tenantId, kind, key],
        )
        expect(Number(got?.n), `${kind} ${key}`).toBe(n)
      }
    },
  )

  run(
    'fingerprint → token counters: distinct token identities per fingerprint over rung-1 observations',
    async () => {
      const rows = await h.store.db.all<{ key: string; n: number; last_ms: number }>(
        "SELECT key, n, last_ms FROM device_link_counts WHERE tenant_id = ? AND kind = 'ft'",
        [t.tenantId],
      )
      const expected = fingerprintTokens(obs)
      expect(new Map(rows.map((c) => [c.key, { n: Number(c.n), lastMs: Number(c.last_ms) }]))).toEqual(
        expected,
      )
      expect([...expected.values()].some((x) => x.n > 1)).toBe(true)
    },
  )

  run('IP velocity: every event counted the distinct accounts on its IP in the 10 minutes before it', () => {
    const byId = new Map(events.map((e) => [e.id, e]))
    const ordered = scored.map((s) => byId.get(s.eventId)!)
    const wrong: string[] = []
    let checked = 0
    let shared = 0
    ordered.forEach((e, k) => {
      if (e.ip_hash === null) return
      const want = ipAccountsRecount(ordered, k)
      const got = unpackJson<{ history: { ipAccounts: number } }>(e.inputs!).history.ipAccounts
      if (got !== want) wrong.push(`${e.id}: got ${got} want ${want}`)
      checked++
      if (want > 2) shared++
    })
    expect(wrong.slice(0, 6), `${wrong.length} of ${checked} differ`).toEqual([])
    expect(checked).toBeGreaterThan(150)
    expect(shared).toBeGreaterThan(10)
  })

  run(
    'mailbox accounts: every event counted the distinct accounts on its mailbox before it, its own included',
    async () => {
      const rows = await h.store.db.all<{
        id: string
        email_hash: string | null
        user_id: string | null
        inputs: string
      }>('SELECT id, email_hash, user_id, inputs FROM events WHERE tenant_id = ?', [t.tenantId])
      const byId = new Map(rows.map((e) => [e.id, e]))
      const accounts = new Map<string, Set<string>>()
      const wrong: string[] = []
      let checked = 0
      let shared = 0
      for (const s of scored) {
        const e = byId.get(s.eventId)!
        const got = unpackJson<{ history: { mailboxAccounts: number | null } }>(e.inputs).history
          .mailboxAccounts
        if (e.email_hash === null || e.user_id === null) {
          if (got !== null) wrong.push(`${e.id}: got ${got} want null`)
          continue
        }
        const seen = accounts.get(e.email_hash) ?? new Set<string>()
        accounts.set(e.email_hash, seen)
        seen.add(e.user_id)
        if (got !== seen.size) wrong.push(`${e.id}: got ${got} want ${seen.size}`)
        checked++
        if (seen.size > 2) shared++
      }
      expect(wrong.slice(0, 6), `${wrong.length} of ${checked} differ`).toEqual([])
      expect(checked).toBeGreaterThan(20)
      expect(shared).toBeGreaterThan(5)
    },
  )

  run(
    'ip_accounts: per IP and account, the time of its latest event; the trim keeps the last hour',
    async () => {
      const read = async () =>
        new Map(
          (
            await h.store.db.all<{ ip_hash: string; user_id: string; last_ms: number }>(
              'SELECT ip_hash, user_id, last_ms FROM ip_accounts WHERE tenant_id = ?',
              [t.tenantId],
            )
          ).map((r) => [`${r.ip_hash}|${r.user_id}`, Number(r.last_ms)]),
        )
      const pairs = ipAccountPairs(events)
      expect(await read()).toEqual(pairs)
      const last = Math.max(...pairs.values())
      const before = h.clock.now()
      h.clock.set(last + 30 * 60_000)
      await h.jobs.runNow('velocity-trim')
      const kept = new Map([...pairs].filter(([, ms]) => ms >= last + 30 * 60_000 - HOUR))
      expect(kept.size).toBeGreaterThan(0)
      expect(kept.size).toBeLessThan(pairs.size)
      expect(await read()).toEqual(kept)
      h.clock.set(before)
    },
  )

  run('event_rollup: per hour and verdict, counts and score sums; per reason, counts', async () => {
    const rows = await h.store.db.all<{
      hour_ms: number
      verdict: string
      reason: string
      n: number
      score_sum: number
    }>('SELECT hour_ms, verdict, reason, n, score_sum FROM event_rollup WHERE tenant_id = ?', [t.tenantId])
    const got = new Map(
      rows.map((x) => [
        `${Number(x.hour_ms)}|${x.verdict}|${x.reason}`,
        { n: Number(x.n), sum: Number(x.score_sum) },
      ]),
    )
    expect(got).toEqual(rollup(events))
  })

  run(
    'asn_daily: events and bad events per day and ASN; an event is bad when labelled or its core score blocks',
    async () => {
      const labelled = new Set(
        (
          await h.store.db.all<{ event_id: string }>(
            "SELECT event_id FROM labels WHERE tenant_id = ? AND label IN ('fraud', 'chargeback')",
            [t.tenantId],
          )
        ).map((l) => l.event_id),
      )
      for (const e of events) {
        const bad = labelled.has(e.id) || coreScore(e.checks) >= 70
        expect(Number(e.asn_bad), `${e.id} ${e.checks}`).toBe(bad ? 1 : 0)
      }
      const rows = await h.store.db.all<{ day_ms: number; asn: number; events: number; bad: number }>(
        'SELECT day_ms, asn, events, bad FROM asn_daily WHERE tenant_id = ?',
        [t.tenantId],
      )
      const got = new Map(
        rows.map((x) => [
          `${Number(x.day_ms)}|${Number(x.asn)}`,
          { events: Number(x.events), bad: Number(x.bad) },
        ]),
      )
      expect(got).toEqual(asnDays(events))
      // Blocks that only a list or the network made are not bad for the ASN.
      expect(events.some((e) => e.verdict === 'block' && Number(e.asn_bad) === 0)).toBe(true)
    },
  )

  run(
    'GET /v1/stats over windows aligned and not aligned to hours equals a count over the events',
    async () => {
      const times = events.map((e) => Number(e.created_ms)).sort((a, b) => a - b)
      const last = times[times.length - 1]!
      const lastHour = Math.floor(last / HOUR) * HOUR
      const ends = [
        last,
        last + 1,
        last + 17 * 60_000 + 3,
        lastHour + HOUR,
        lastHour + HOUR - 1,
        lastHour,
        times[Math.floor(times.length / 2)]!,
        times[Math.floor(times.length / 3)]! + HOUR,
        times[Math.floor(times.length / 4)]! + 5 * HOUR,
        Math.floor(times[Math.floor(times.length / 2)]! / HOUR) * HOUR + 24 * HOUR,
      ]
      for (const to of ends) {
        for (const hours of [1, 5, 24, 48]) {
          h.clock.set(to)
          const res = await h.app.inject({ url: `/v1/stats?window_hours=${hours}`, headers: t.headers })
          expect(res.statusCode, res.body).toBe(200)
          const got = res.json()
          const want = stats(events, to, hours)
          const where = `window ${hours} h ending ${new Date(to).toISOString()}`
          expect(got.total, where).toBe(want.total)
          expect(got.verdicts, where).toEqual(want.verdicts)
          expect(got.topReasons, where).toEqual(want.topReasons)
          if (want.avgScore === null) expect(got.avgScore, where).toBeNull()
          else expect(got.avgScore, where).toBeCloseTo(want.avgScore, 1)
        }
      }
      // A window ending exactly on an event excludes the events exactly one window earlier.
      const edge = times[Math.floor(times.length / 2)]!
      h.clock.set(edge + HOUR)
      const res = (await h.app.inject({ url: '/v1/stats?window_hours=1', headers: t.headers })).json()
      expect(res.total).toBe(stats(events, edge + HOUR, 1).total)
    },
  )

  /** Profiles that differ from the recount, described; `which` picks the events to look at. */
  const profileErrors = (which: (o: ObservationRow) => boolean) => {
    const byEvent = new Map(obs.map((o) => [o.event_id, o]))
    const wrong: string[] = []
    let seen = 0
    for (const s of scored) {
      if (!s.device) continue
      const at = byEvent.get(s.eventId)
      expect(at, s.eventId).toBeDefined()
      if (!which(at!)) continue
      seen++
      const want = profileFigures(obs, at!)
      const got = {
        account_count: s.device.account_count,
        account_count_same_network: s.device.account_count_same_network,
        distinct_ips: s.device.distinct_ips,
      }
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        const o = at!
        wrong.push(
          `rung ${o.rung} fp ${o.device_id} user ${o.user_id} ip ${o.ip_hash ? 'yes' : 'none'}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`,
        )
      }
    }
    expect(seen).toBeGreaterThan(10)
    return { wrong: wrong.slice(0, 6), count: `${wrong.length} of ${seen} profiles differ` }
  }

  run(
    'device profiles: account_count, account_count_same_network and distinct_ips include the current event',
    () => {
      const { wrong, count } = profileErrors((o) => o.user_id !== null && o.ip_hash !== null)
      expect(wrong, count).toEqual([])
    },
  )

  run('device profiles of an event without a user or an IP still count the device’s accounts and IPs', () => {
    // "accounts seen on this raw fingerprint" / "distinct IPs this device has been scored from": an event
    // that carries no user id (or no IP) itself still reports what the device has been seen with.
    const { wrong, count } = profileErrors((o) => o.user_id === null || o.ip_hash === null)
    expect(wrong, count).toEqual([])
  })
})
