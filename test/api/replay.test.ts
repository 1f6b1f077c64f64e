import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { RULES_VERSION } from '../../src/scoring/recorded.js'
import type { Decision } from '../../src/services/decisions/replay.js'
import { packJson, unpackJson } from '../../src/store/events/compact-json.js'
import { FUZZ_RUNS } from '../fuzz/harness.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
/** Events of the replay property run: 2,000 at full fuzz length (test:full), 600 in `npm test`'s short runs. */
const EVENTS = FUZZ_RUNS >= 2000 ? 2000 : 600

/** Addresses the bundled data classes differently: residential, datacenter, Tor, VPN, relay. */
const IPS = [
  '73.162.10.20',
  '79.200.1.1',
  '79.200.7.7',
  '24.5.1.1',
  '8.8.8.8',
  '5.9.60.2',
  '45.33.32.156',
  '185.220.101.1',
  '185.65.134.7',
  '172.225.10.1',
]
const EMAILS = [
  'ann@gmail.com',
  'bob+shop@gmail.com',
  'x7qk2vz9@yopmail.com',
  'carol@example.org',
  'dan@mailinator.com',
]

/** A random event from small pools, so history (IP velocity, device reuse, sessions) builds up. */
const event = fc.record(
  {
    event: fc.constantFrom('signup', 'login', 'checkout'),
    user_id: fc.integer({ min: 1, max: 40 }).map((n) => `user-${n}`),
    device_id: fc.integer({ min: 1, max: 12 }).map((n) => `fp-${n}`),
    ip: fc.constantFrom(...IPS),
    email: fc.constantFrom(...EMAILS),
    event_country: fc.constantFrom('US', 'DE', 'BR'),
    timezone: fc.constantFrom('Europe/Berlin', 'America/New_York', 'Asia/Tokyo'),
    device: fc.record(
      { is_headless: fc.boolean(), is_tampered: fc.boolean(), is_emulator: fc.boolean() },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['event'] },
)

/** Between events: time passes, the config changes, or a list entry is added. */
const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ advanceMs: fc.integer({ min: 0, max: 20 * 60_000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      weights: fc.record(
        { datacenterIp: fc.integer({ min: 0, max: 100 }), emailDisposable: fc.integer({ min: 0, max: 100 }) },
        { requiredKeys: [] },
      ),
      thresholds: fc.record({
        review: fc.integer({ min: 10, max: 50 }),
        block: fc.integer({ min: 50, max: 90 }),
      }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ block: fc.integer({ min: 1, max: 40 }).map((n) => `user-${n}`) }) },
)

describe.each<Engine>(['sqlite', 'postgres'])('config versions and replay on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant({ rateLimit: 1_000_000 })
  }
  const inject = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, tenant = t) =>
    h.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) })
  const replay = (eventId: string, tenant = t) => inject('POST', '/v1/replay', { event_id: eventId }, tenant)

  run('every change of the effective config makes a version; no-ops and refusals make none', async () => {
    await setup()
    const created = h.clock.now()
    expect((await inject('GET', '/v1/config')).json().version).toBe(0)
    const first = await inject('GET', '/v1/config/versions')
    expect(first.json().versions).toEqual([
      { id: 0, createdMs: created, config: (await inject('GET', '/v1/config')).json().effective },
    ])
    h.clock.advance(1000)
    const put = await inject('PUT', '/v1/config', { weights: { datacenterIp: 50 } })
    expect(put.json().version).toBe(1)
    // The same value again, and a refused change, record nothing.
    expect((await inject('PUT', '/v1/config', { weights: { datacenterIp: 50 } })).json().version).toBe(1)
    const refused = await inject('PUT', '/v1/config', { thresholds: { review: 90, block: 80 } })
    expect(refused.statusCode).toBe(400)
    h.clock.advance(1000)
    expect((await inject('PUT', '/v1/config', { thresholds: { block: 65 } })).json().version).toBe(2)
    const all = (await inject('GET', '/v1/config/versions')).json().versions
    expect(all.map((v: { id: number }) => v.id)).toEqual([2, 1, 0])
    expect(all.map((v: { createdMs: number }) => v.createdMs)).toEqual([
      created + 2000,
      created + 1000,
      created,
    ])
    expect(all[0].config.thresholds.block).toBe(65)
    expect(all[0].config.weights.datacenterIp).toBe(50)
    expect(all[1].config.thresholds.block).toBe(70)
    expect(all[2].config.weights.datacenterIp).toBe(45)
    expect((await inject('GET', '/v1/config')).json().version).toBe(2)
    // Paged, newest first.
    const page = (await inject('GET', '/v1/config/versions?limit=1&offset=1')).json().versions
    expect(page.map((v: { id: number }) => v.id)).toEqual([1])
    for (const bad of ['limit=0', 'limit=101', 'offset=x', 'limit=-1', 'page=2']) {
      const res = await inject('GET', `/v1/config/versions?${bad}`)
      expect(res.statusCode, bad).toBe(400)
      expect(res.json().error).toMatch(/limit|offset|page/)
    }
    // Versions are the tenant's own.
    const other = await h.tenant()
    expect((await inject('GET', '/v1/config/versions', undefined, other)).json().versions).toHaveLength(1)
  })

  run(
    'replay: side by side, 404 for unknown and foreign ids, 400 without an id, 422 without inputs',
    async () => {
      await setup()
      const scored = await inject('POST', '/v1/score', {
        event: 'signup',
        ip: '8.8.8.8',
        email: 'x7qk2vz9@yopmail.com',
      })
      const id = scored.json().event_id
      const res = await replay(id)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({
        recorded: {
          score: scored.json().score,
          verdict: scored.json().verdict,
          reasons: scored.json().reasons,
        },
        replayed: {
          score: scored.json().score,
          verdict: scored.json().verdict,
          reasons: scored.json().reasons,
        },
        identical: true,
        config_version: 0,
        rules_version: RULES_VERSION,
      })
      // A later config change does not change what the event replays under.
      await inject('PUT', '/v1/config', { weights: { datacenterIp: 0, emailDisposable: 0 } })
      expect((await replay(id)).json()).toMatchObject({ identical: true, config_version: 0 })
      const after = await inject('POST', '/v1/score', {
        event: 'signup',
        ip: '8.8.8.8',
        email: 'x7qk2vz9@yopmail.com',
      })
      expect((await replay(after.json().event_id)).json()).toMatchObject({
        identical: true,
        config_version: 1,
      })
      expect(after.json().score).toBeLessThan(scored.json().score)

      expect((await replay('00000000-0000-7000-8000-000000000000')).statusCode).toBe(404)
      const other = await h.tenant()
      const foreign = await replay(id, other)
      expect(foreign.statusCode).toBe(404)
      expect(foreign.body).not.toContain('yopmail')
      for (const body of [{}, { event_id: '' }, { event_id: 'x'.repeat(65) }, { event_id: id, extra: 1 }]) {
        const bad = await inject('POST', '/v1/replay', body)
        expect(bad.statusCode, JSON.stringify(body)).toBe(400)
        expect(bad.json().error).toMatch(/event_id|extra/)
      }
      // An event recorded before inputs were kept (as after an upgrade) cannot be decided again.
      await h.store.db.run('UPDATE events SET inputs = NULL WHERE tenant_id = ? AND id = ?', [t.tenantId, id])
      const legacy = await replay(id)
      expect(legacy.statusCode).toBe(422)
      expect(legacy.json().code).toBe('unprocessable')
    },
  )

  run(
    'replay: an event whose record differs from what the engine decides now is not identical, and says how',
    async () => {
      await setup()
      const payload = { event: 'signup', ip: '8.8.8.8', email: 'x7qk2vz9@yopmail.com', user_id: 'u-diff' }
      const scoreOne = async () => {
        const res = await inject('POST', '/v1/score', payload)
        expect(res.statusCode, res.body).toBe(200)
        const { event_id, score, verdict, reasons } = res.json()
        expect(reasons.length).toBeGreaterThan(1)
        return { id: event_id as string, decision: { score, verdict, reasons } as Decision }
      }
      // As an event decided by an older rules version would be stored: the record no longer matches.
      const set = (id: string, sql: string, ...params: (string | number)[]) =>
        h.store.db.run(`UPDATE events SET ${sql} WHERE tenant_id = ? AND id = ?`, [...params, t.tenantId, id])

      // Another score recorded: recorded shows the record, replayed what the engine decides.
      const a = await scoreOne()
      await set(a.id, 'score = ?', a.decision.score - 7)
      const scoreDiff = (await replay(a.id)).json()
      expect(scoreDiff).toMatchObject({ identical: false, replayed: a.decision, config_version: 0 })
      expect(scoreDiff.recorded).toEqual({ ...a.decision, score: a.decision.score - 7 })

      // Other reasons recorded (one missing), same score and verdict.
      const b = await scoreOne()
      const fewer = b.decision.reasons.slice(1)
      await set(b.id, 'reasons = ?', JSON.stringify(fewer))
      const reasonDiff = (await replay(b.id)).json()
      expect(reasonDiff).toMatchObject({ identical: false, replayed: b.decision })
      expect(reasonDiff.recorded).toEqual({ ...b.decision, reasons: fewer })

      // Only a check's message differs: score, verdict and reasons agree, yet it is not identical.
      const c = await scoreOne()
      const row = await h.store.db.get<{ checks: string }>(
        'SELECT checks FROM events WHERE tenant_id = ? AND id = ?',
        [t.tenantId, c.id],
      )
      const checks = unpackJson<{ message: string }[]>(row!.checks)
      checks[0]!.message = `${checks[0]!.message} (worded differently)`
      await set(c.id, 'checks = ?', packJson(checks))
      const checkDiff = (await replay(c.id)).json()
      expect(checkDiff).toMatchObject({ identical: false, recorded: c.decision, replayed: c.decision })

      // The recorded input itself changed (the disposable email signal gone): the engine decides anew.
      const d = await scoreOne()
      const inputs = await h.store.db.get<{ inputs: string }>(
        'SELECT inputs FROM events WHERE tenant_id = ? AND id = ?',
        [t.tenantId, d.id],
      )
      const recorded = unpackJson<{ email: { isDisposable: boolean } }>(inputs!.inputs)
      expect(recorded.email.isDisposable).toBe(true)
      recorded.email.isDisposable = false
      await set(d.id, 'inputs = ?', packJson(recorded))
      const inputDiff = (await replay(d.id)).json()
      expect(inputDiff).toMatchObject({ identical: false, recorded: d.decision })
      expect(inputDiff.replayed.reasons).not.toContain('disposable_email')
      expect(inputDiff.replayed.score).toBeLessThan(d.decision.score)

      // Untouched, the same event replays identically.
      const e = await scoreOne()
      expect((await replay(e.id)).json()).toMatchObject({
        identical: true,
        recorded: e.decision,
        replayed: e.decision,
      })
    },
  )

  run(
    `replays every one of ${EVENTS} random events identically, through config changes and list entries`,
    async () => {
      await setup()
      const plan = fc.sample(fc.tuple(fc.array(event, { minLength: 1, maxLength: 30 }), step), {
        seed: SEED,
        numRuns: 400,
      })
      const ids: string[] = []
      const held = new Map<string, Decision>()
      const verdicts = new Set<string>()
      const reasons = new Set<string>()
      for (const [rows, s] of plan) {
        if (ids.length >= EVENTS) break
        const res =
          rows.length === 1
            ? await inject('POST', '/v1/score', rows[0])
            : await inject('POST', '/v1/batch/score', { rows })
        expect(res.statusCode, res.body).toBe(200)
        const results = rows.length === 1 ? [res.json()] : res.json().results
        for (const r of results) {
          ids.push(r.event_id)
          held.set(r.event_id, { score: r.score, verdict: r.verdict, reasons: r.reasons })
          verdicts.add(r.verdict)
          for (const code of r.reasons) reasons.add(code)
        }
        if ('advanceMs' in s) h.clock.advance(s.advanceMs)
        else if ('block' in s)
          await inject('POST', '/v1/lists', { list: 'block', type: 'user', value: s.block })
        else expect((await inject('PUT', '/v1/config', s)).statusCode).toBe(200)
      }
      expect(ids.length).toBeGreaterThanOrEqual(EVENTS)
      // The stream reached the rules the record trims and renames, and every verdict.
      expect([...verdicts].sort()).toEqual(['allow', 'block', 'review'])
      for (const code of [
        'ip_velocity',
        'device_reuse',
        'blocklisted_user',
        'datacenter_ip',
        'disposable_email',
      ]) {
        expect(reasons, code).toContain(code)
      }
      expect(['vpn_drop', 'ip_cloaking', 'device_ip_hopping'].filter((c) => reasons.has(c))).not.toEqual([])
      const versions = new Set<number>()
      for (const id of ids) {
        const res = await replay(id)
        expect(res.statusCode).toBe(200)
        const body = res.json()
        expect(body.identical, `${id}: ${JSON.stringify(body)}`).toBe(true)
        expect(body.replayed).toEqual(body.recorded)
        // What was recorded is what the caller was answered when the event was scored.
        expect(body.recorded, id).toEqual(held.get(id))
        versions.add(body.config_version)
      }
      expect(versions.size).toBeGreaterThan(2)
    },
    600_000,
  )
})
