import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import type { Decision } from '../../src/services/decisions/replay.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const SEED = Number(process.env.FUZZ_SEED ?? 20261123)

const IPS = [
  '73.162.10.20',
  '79.200.1.1',
  '8.8.8.8',
  '5.9.60.2',
  '185.220.101.1',
  '203.0.113.9',
  '2001:db8::7',
]

/** A random event with attributes, from small pools so counts, velocity and lists build up. */
const event = fc.record(
  {
    event: fc.constantFrom('signup', 'login', 'checkout'),
    user_id: fc.integer({ min: 1, max: 20 }).map((n) => `user-${n}`),
    device_id: fc.integer({ min: 1, max: 8 }).map((n) => `fp-${n}`),
    ip: fc.constantFrom(...IPS),
    phone: fc.constantFrom('+442079460958', '+14155550123'),
    device: fc.record({ is_headless: fc.boolean(), is_tampered: fc.boolean() }, { requiredKeys: [] }),
    attributes: fc.record(
      {
        amount: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.double({ min: 0, max: 2000, noNaN: true })),
        plan: fc.constantFrom('free', 'pro', 'enterprise'),
        card_fp: fc.constantFrom('card-a', 'card-b', 'card-c'),
        items: fc.array(fc.constantFrom('gift_card', 'phone', 'book'), { maxLength: 3 }),
        first_order: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['event'] },
)

/** Valid conditions over every kind of variable a rule reads, hashed and counted attributes included. */
const atom = fc.oneof(
  fc.integer({ min: 0, max: 2000 }).map((n) => `event.attributes.amount > ${n}`),
  fc.constantFrom('pro', 'free').map((p) => `has(event.attributes.plan) && event.attributes.plan == '${p}'`),
  fc
    .constantFrom('gift_card', 'phone')
    .map((i) => `has(event.attributes.items) && '${i}' in event.attributes.items`),
  fc.constant('has(event.attributes.first_order) && event.attributes.first_order'),
  fc.constant('has(event.attributes.card_fp) && event.attributes.card_fp == event.attributes.card_fp'),
  fc.integer({ min: 1, max: 5 }).map((n) => `has(counts.card_fp) && counts.card_fp.accounts_24h >= ${n}`),
  fc.integer({ min: 1, max: 8 }).map((n) => `has(counts.card_fp) && counts.card_fp.events_10m >= ${n}`),
  fc
    .constantFrom('datacenter_ip', 'headless_browser', 'ip_velocity', 'device_reuse')
    .map((c) => `'${c}' in reasons`),
  fc.integer({ min: 0, max: 100 }).map((n) => `score >= ${n}`),
  fc.constantFrom('device.headless', 'ip.datacenter', 'ip.tor', '!ip.present', 'phone.present'),
  fc.integer({ min: 1, max: 6 }).map((n) => `velocity.ip_accounts >= ${n}`),
  fc.constantFrom("'vip' in lists.user", "'office' in lists.ip", "'block' in lists.phone"),
  fc.constantFrom('signup', 'checkout').map((e) => `event.name == '${e}'`),
)
const condition = fc.oneof(
  { weight: 3, arbitrary: atom },
  {
    weight: 2,
    arbitrary: fc.tuple(atom, atom, fc.constantFrom('&&', '||')).map(([a, b, op]) => `(${a}) ${op} (${b})`),
  },
  { weight: 1, arbitrary: atom.map((a) => `!(${a})`) },
)
const ruleSet = fc.uniqueArray(
  fc.record({
    id: fc.integer({ min: 1, max: 30 }).map((n) => `r${n}`),
    when: condition,
    then: fc.oneof(
      fc.integer({ min: -100, max: 100 }).map((score) => ({ score })),
      fc.constantFrom('allow', 'review', 'block').map((verdict) => ({ verdict })),
    ),
    mode: fc.constantFrom('enforce', 'enforce', 'shadow', 'off'),
    rollout: fc.oneof(fc.constant(100), fc.integer({ min: 0, max: 100 })),
  }),
  { minLength: 0, maxLength: 8, selector: (r) => r.id },
)

/** Between events: time passes, the rules change, or a list entry (named, a range, a phone) is added. */
const step = fc.oneof(
  { weight: 5, arbitrary: fc.record({ advanceMs: fc.integer({ min: 0, max: 30 * 60_000 }) }) },
  { weight: 2, arbitrary: fc.record({ rules: ruleSet }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { list: 'vip', type: 'user', value: 'user-3' },
      { list: 'office', type: 'ip', value: '203.0.113.0/24' },
      { list: 'block', type: 'phone', value: '+14155550123' },
      { list: 'block', type: 'ip', value: '2001:db8::/32' },
    ),
  },
)

describe.each<Engine>(['sqlite', 'postgres'])('replay with random tenant rules on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const inject = (method: 'POST' | 'PUT', url: string, payload: object) =>
    h.app.inject({ method, url, headers: t.headers, payload })

  run(
    'replays every one of 600 random events identically under random valid rule sets, lists and attributes',
    async () => {
      h = await build({ engine })
      t = await h.tenant({ rateLimit: 1_000_000 })
      const declared = await inject('PUT', '/v1/config', {
        attributes: { card_fp: { hashed: true, counted: true } },
      })
      expect(declared.statusCode).toBe(200)
      const plan = fc.sample(fc.tuple(fc.array(event, { minLength: 1, maxLength: 12 }), step), {
        seed: SEED,
        numRuns: 200,
      })
      const ids: string[] = []
      const held = new Map<string, Decision>()
      const fired = new Set<string>()
      let ruleSets = 0
      for (const [rows, s] of plan) {
        if (ids.length >= 600) break
        const res =
          rows.length === 1
            ? await inject('POST', '/v1/score', rows[0]!)
            : await inject('POST', '/v1/batch/score', { rows })
        expect(res.statusCode, res.body).toBe(200)
        for (const r of rows.length === 1 ? [res.json()] : res.json().results) {
          ids.push(r.event_id)
          held.set(r.event_id, { score: r.score, verdict: r.verdict, reasons: r.reasons })
          for (const code of r.reasons) if (code.startsWith('rule:')) fired.add(code)
        }
        if ('advanceMs' in s) h.clock.advance(s.advanceMs)
        else if ('rules' in s) {
          const saved = await inject('PUT', '/v1/config', { rules: s.rules })
          expect(saved.statusCode, saved.body).toBe(200)
          ruleSets++
        } else expect((await inject('POST', '/v1/lists', s)).statusCode).toBe(200)
      }
      expect(ids.length).toBeGreaterThanOrEqual(600)
      // The stream changed the rules often and they fired.
      expect(ruleSets).toBeGreaterThan(10)
      expect(fired.size).toBeGreaterThan(5)
      for (const id of ids) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/replay',
          headers: t.headers,
          payload: { event_id: id },
        })
        expect(res.statusCode).toBe(200)
        const body = res.json()
        expect(body.identical, `${id}: ${JSON.stringify(body)}`).toBe(true)
        expect(body.recorded, id).toEqual(held.get(id))
      }
    },
    600_000,
  )
})
