import { afterEach, describe, expect, it } from 'vitest'
import { contextFor } from '../../src/context.js'
import { simulateConfig } from '../../src/services/rules/simulate.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

const DATACENTER = { ip: '8.8.8.8' }
const DISPOSABLE = { email: 'ann@yopmail.com' }

describe.each<Engine>(['sqlite', 'postgres'])('what-if simulation on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  let n = 0
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const inject = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, tenant = t) =>
    h.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) })
  const simulate = (payload: object, tenant = t) => inject('POST', '/v1/config/simulate', payload, tenant)

  /** Scores one event as a fresh user and labels it; returns the response. */
  const scored = async (payload: object, label: string | null) => {
    const res = await inject('POST', '/v1/score', { event: 'signup', user_id: `u-${++n}`, ...payload })
    expect(res.statusCode).toBe(200)
    if (label) {
      expect((await inject('POST', '/v1/label', { label, event_id: res.json().event_id })).statusCode).toBe(
        200,
      )
    }
    h.clock.advance(1000)
    return res.json() as { event_id: string; score: number; verdict: string; reasons: string[] }
  }

  /**
   * Five events whose scores follow from the default weights: datacenter_ip 45 (review), disposable_email
   * 35 (allow), both 80 (block), neither 0 (allow). Labels: fraud, legit, fraud, fraud, legit.
   */
  const stream = async () => {
    h = await build({ engine })
    t = await h.tenant()
    const events = [
      await scored(DATACENTER, 'fraud'),
      await scored(DATACENTER, 'legit'),
      await scored(DISPOSABLE, 'fraud'),
      // Another mailbox: one shared by two accounts would add mailbox_reuse.
      await scored({ ...DATACENTER, ...DISPOSABLE, email: 'another@mailinator.com' }, 'fraud'),
      await scored({}, 'legit'),
    ]
    // The hand computation below rests on exactly these firings.
    expect(events.map((e) => e.reasons)).toEqual([
      ['datacenter_ip'],
      ['datacenter_ip'],
      ['disposable_email'],
      ['datacenter_ip', 'disposable_email'],
      [],
    ])
    expect(events.map((e) => e.verdict)).toEqual(['review', 'review', 'allow', 'block', 'allow'])
    return events
  }

  run(
    'matches a hand-computed case: transitions, changes, precision and recall before and after',
    async () => {
      await stream()
      // disposable 45: E3 45 → review; block at 95: E4 90 → review.
      const res = await simulate({ weights: { emailDisposable: 45 }, thresholds: { block: 95 } })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({
        events: 5,
        changed: 2,
        skipped: 0,
        config_version: 0,
        transitions: {
          allow: { allow: 1, review: 1, block: 0 },
          review: { allow: 0, review: 2, block: 0 },
          block: { allow: 0, review: 1, block: 0 },
        },
        labelled: {
          events: 5,
          fraud: 3,
          legit: 2,
          // Before: block flags E4 (fraud); review flags E1 (fraud) and E2 (legit).
          before: { block: { precision: 1, recall: 1 / 3 }, review: { precision: 0.5, recall: 1 / 3 } },
          // After: nothing blocks; review flags E1-E4, three of them fraud.
          after: { block: { precision: null, recall: 0 }, review: { precision: 0.75, recall: 1 } },
        },
      })
    },
  )

  run('compares with the current config, not with what older events were decided under', async () => {
    await stream()
    expect((await inject('PUT', '/v1/config', { weights: { emailDisposable: 40 } })).json().version).toBe(1)
    // Under the current config E3 (disposable, recorded as allow) is a review: an empty proposal changes nothing.
    const res = (await simulate({})).json()
    expect(res.changed).toBe(0)
    expect(res.config_version).toBe(1)
    expect(res.transitions).toEqual({
      allow: { allow: 1, review: 0, block: 0 },
      review: { allow: 0, review: 3, block: 0 },
      block: { allow: 0, review: 0, block: 1 },
    })
    // Keys not sent keep their current value: lowering the datacenter weight alone moves E1 and E2 only.
    const lower = (await simulate({ weights: { datacenterIp: 10 } })).json()
    expect(lower.transitions.review).toEqual({ allow: 2, review: 1, block: 0 })
    expect(lower.transitions.block).toEqual({ allow: 0, review: 1, block: 0 })
  })

  run('takes the newest N events or a time window, and skips events without recorded inputs', async () => {
    const events = await stream()
    const start = h.clock.now() - 5000
    expect((await simulate({ limit: 2 })).json().events).toBe(2)
    // The newest two are E4 and E5: one block, one allow.
    expect((await simulate({ limit: 2 })).json().transitions.block.block).toBe(1)
    // [since, until): E2 and E3, not E4 created at until_ms itself.
    const windowed = (await simulate({ since_ms: start + 1000, until_ms: start + 3000 })).json()
    expect(windowed.events).toBe(2)
    expect(windowed.transitions.review.review).toBe(1)
    expect(windowed.transitions.allow.allow).toBe(1)
    expect((await simulate({ until_ms: start })).json().events).toBe(0)
    expect((await simulate({ since_ms: start, until_ms: start })).json().events).toBe(0)
    await h.store.db.run('UPDATE events SET inputs = NULL WHERE tenant_id = ? AND id = ?', [
      t.tenantId,
      events[0]!.event_id,
    ])
    const partial = (await simulate({})).json()
    expect(partial).toMatchObject({ events: 4, skipped: 1 })
    expect(partial.labelled.events).toBe(4)
  })

  run('pages through events sharing a millisecond (a batch) without losing or repeating one', async () => {
    h = await build({ engine })
    t = await h.tenant()
    // Three batches, each one millisecond: 7 + 7 + 7 events, pages of 5 end inside every one of them.
    for (let b = 0; b < 3; b++) {
      const rows = Array.from({ length: 7 }, (_, i) => ({
        event: 'signup',
        user_id: `b${b}-${i}`,
        ...(i % 3 === 0 ? DATACENTER : {}),
        ...(i % 2 === 0 ? DISPOSABLE : {}),
      }))
      expect((await inject('POST', '/v1/batch/score', { rows })).statusCode).toBe(200)
      h.clock.advance(1000)
    }
    const ctx = contextFor(h.services, (await h.store.tenants.get(t.tenantId))!, 'paging-test')
    const proposal = { weights: { emailDisposable: 45 } }
    const whole = await simulateConfig(ctx, proposal)
    expect(whole.events).toBe(21)
    for (const pageSize of [1, 5, 7, 8]) {
      expect(await simulateConfig(ctx, proposal, pageSize), `pages of ${pageSize}`).toEqual(whole)
    }
    expect((await simulateConfig(ctx, { ...proposal, limit: 9 }, 5)).events).toBe(9)
  })

  run('refuses bad proposals and bounds with 400 naming the field, and writes nothing', async () => {
    await stream()
    const counts = async () =>
      Promise.all(
        ['events', 'labels', 'config_versions', 'tenant_config', 'event_rollup'].map(
          async (table) => (await h.store.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n,
        ),
      )
    const before = await counts()
    const cases: [object, RegExp][] = [
      [{ limit: 0 }, /limit/],
      [{ limit: 100_001 }, /limit/],
      [{ limit: 1.5 }, /limit/],
      [{ since_ms: -1 }, /since_ms/],
      [{ since_ms: 10, until_ms: 5 }, /since_ms/],
      [{ thresholds: { review: 90, block: 80 } }, /thresholds\.review/],
      [{ weights: { datacenterIp: 101 } }, /datacenterIp/],
      [{ weights: { nope: 1 } }, /nope/],
      [{ extra: true }, /extra/],
    ]
    for (const [body, message] of cases) {
      const res = await simulate(body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.json().error, JSON.stringify(body)).toMatch(message)
    }
    expect((await simulate({ weights: { datacenterIp: 0 }, limit: 100_000 })).statusCode).toBe(200)
    expect(await counts()).toEqual(before)
    expect((await inject('GET', '/v1/config')).json()).toMatchObject({
      version: 0,
      overrides: { weights: {} },
    })
  })
})
