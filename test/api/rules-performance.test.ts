import type { Static } from '@fastify/type-provider-typebox'
import { afterEach, describe, expect, it } from 'vitest'
import type { RulesPerformance } from '../../src/schemas/rules.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const DAY = 86_400_000

const HEADLESS = { is_headless: true }
const TAMPERED = { is_tampered: true }

/** One rule's row of the answer, as the response schema declares it. */
type Row = Static<typeof RulesPerformance>['rules'][number]

describe.each<Engine>(['sqlite', 'postgres'])('rule performance on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  let n = 0
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  /** Scores one event (a fresh user each time, so no velocity rule joins in) and returns its id. */
  const score = async (payload: object, tenant = t): Promise<string> => {
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: tenant.headers,
      payload: { event: 'login', user_id: `u-${++n}`, ...payload },
    })
    expect(r.statusCode).toBe(200)
    return r.json().event_id
  }
  const label = async (eventId: string, outcome: string, tenant = t) => {
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: tenant.headers,
      payload: { label: outcome, event_id: eventId },
    })
    expect(r.statusCode).toBe(200)
  }
  const scoreLabelled = async (payload: object, outcome: string | null, tenant = t) => {
    const id = await score(payload, tenant)
    if (outcome) await label(id, outcome, tenant)
    return id
  }
  const perf = async (q = '', tenant = t) =>
    h.app.inject({ url: `/v1/rules/performance${q}`, headers: tenant.headers })
  const byReason = (body: { rules: Row[] }) => new Map(body.rules.map((r) => [r.reason, r]))

  run('figures over a labelled stream whose truth is known, inside the window only', async () => {
    await setup()
    // Older than 30 days: a headless event labelled legit, seen only with a wider window.
    await scoreLabelled({ device: HEADLESS }, 'legit')
    h.clock.advance(31 * DAY)
    // headless fires only on fraud (6 events, one of them a chargeback).
    for (let i = 0; i < 5; i++) await scoreLabelled({ device: HEADLESS }, 'fraud')
    await scoreLabelled({ device: HEADLESS }, 'chargeback')
    // tampered fires on 10: 4 fraud, 4 legit (one labelled fraud first, then legit: the latest wins), 2 unlabelled.
    for (let i = 0; i < 4; i++) await scoreLabelled({ device: TAMPERED }, 'fraud')
    for (let i = 0; i < 3; i++) await scoreLabelled({ device: TAMPERED }, 'legit')
    const changed = await scoreLabelled({ device: TAMPERED }, 'fraud')
    h.clock.advance(1000)
    await label(changed, 'legit')
    for (let i = 0; i < 2; i++) await scoreLabelled({ device: TAMPERED }, null)
    // disposable email fires on 3 unlabelled events; one clean event is labelled legit.
    for (let i = 0; i < 3; i++) await scoreLabelled({ email: `x${i}@yopmail.com` }, null)
    await scoreLabelled({}, 'legit')
    // Another tenant's labelled events never count here.
    const other = await h.tenant()
    for (let i = 0; i < 3; i++) await scoreLabelled({ device: HEADLESS }, 'legit', other)
    // Events spread over more than an hour, so the hourly rollup and the window's edges both count.
    h.clock.advance(2 * 3600_000)

    const res = await perf()
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.window_days).toBe(30)
    expect(body.labelled_events).toBe(6 + 8 + 1)
    expect(body.rules.map((r: Row) => r.reason)).toEqual([
      'device_tampered',
      'headless_browser',
      'disposable_email',
    ])
    const rules = byReason(body)
    const headless = rules.get('headless_browser')!
    expect(headless).toMatchObject({ fired: 6, fraud: 6, legit: 0, precision: 1, precision_high: 1 })
    expect(headless.precision_low).toBeLessThan(1)
    expect(headless.precision_low).toBeCloseTo(0.6097, 4) // Wilson lower bound of 6/6
    expect(headless.recall).toBe(0.6) // 6 of the 10 labelled fraud events
    const tampered = rules.get('device_tampered')!
    expect(tampered).toMatchObject({ fired: 10, fraud: 4, legit: 4, precision: 0.5, recall: 0.4 })
    expect(tampered.precision_low).toBeCloseTo(0.2152, 4)
    expect(tampered.precision_high).toBeCloseTo(0.7848, 4)
    expect(rules.get('disposable_email')).toEqual({
      reason: 'disposable_email',
      fired: 3,
      fraud: 0,
      legit: 0,
      precision: null,
      precision_low: null,
      precision_high: null,
      recall: 0,
      suggested_weight: null,
    })
    for (const r of body.rules) expect(r.suggested_weight).toBeNull()

    // A 60-day window takes in the old legit headless event.
    const wide = byReason((await perf('?window_days=60')).json()).get('headless_browser')!
    expect(wide).toMatchObject({ fired: 7, fraud: 6, legit: 1, precision: 0.8571 })

    // The other tenant sees only its own.
    const theirs = (await perf('', other)).json()
    expect(theirs.labelled_events).toBe(3)
    expect(theirs.rules).toEqual([
      expect.objectContaining({
        reason: 'headless_browser',
        fired: 3,
        fraud: 0,
        legit: 3,
        precision: 0,
        recall: null,
      }),
    ])
  })

  run('a suggested weight appears at 30 labelled events, not before', async () => {
    await setup()
    for (let i = 0; i < 24; i++) await scoreLabelled({ device: HEADLESS }, 'fraud')
    for (let i = 0; i < 5; i++) await scoreLabelled({ device: HEADLESS }, 'legit')
    const before = byReason((await perf()).json()).get('headless_browser')!
    expect(before).toMatchObject({ fraud: 24, legit: 5, suggested_weight: null })
    await scoreLabelled({ device: HEADLESS }, 'legit')
    const after = byReason((await perf()).json()).get('headless_browser')!
    // 20 * log2(24.5 / 6.5) = 38.3
    expect(after).toMatchObject({ fraud: 24, legit: 6, precision: 0.8, recall: 1, suggested_weight: 38 })
  })

  run('the window is (now - window_days, now]: an event exactly window_days old is out', async () => {
    await setup()
    await scoreLabelled({ device: HEADLESS }, 'fraud')
    h.clock.advance(DAY - 1)
    const inside = (await perf('?window_days=1')).json()
    expect(inside.labelled_events).toBe(1)
    expect(inside.rules).toEqual([
      expect.objectContaining({ reason: 'headless_browser', fired: 1, fraud: 1 }),
    ])
    h.clock.advance(1)
    expect((await perf('?window_days=1')).json()).toEqual({ rules: [], window_days: 1, labelled_events: 0 })
    expect((await perf('?window_days=2')).json().rules[0]).toMatchObject({ fired: 1, fraud: 1 })
  })

  run('an empty window and the bounds of window_days', async () => {
    await setup()
    const empty = await perf()
    expect(empty.statusCode).toBe(200)
    expect(empty.json()).toEqual({ rules: [], window_days: 30, labelled_events: 0 })
    expect((await perf('?window_days=1')).json().window_days).toBe(1)
    expect((await perf('?window_days=365')).json().window_days).toBe(365)
    for (const bad of ['0', '366', '99999999999', 'abc', '-1', '1.5', '']) {
      const r = await perf(`?window_days=${bad}`)
      expect(r.statusCode, bad).toBe(400)
      expect(r.json().error, bad).toContain('window_days')
    }
    expect((await perf('?window=3')).statusCode).toBe(400)
    expect((await h.app.inject({ url: '/v1/rules/performance' })).statusCode).toBe(401)
  })
})
