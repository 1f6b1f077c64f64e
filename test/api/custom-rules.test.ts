import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

const bigOrder = {
  id: 'big_first_order',
  description: 'High-value checkout',
  when: "event.name == 'checkout' && event.attributes.amount > 500",
  then: { score: 45 },
  mode: 'enforce',
  rollout: 100,
}

describe.each<Engine>(['sqlite', 'postgres'])('tenant rules and event attributes on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  afterEach(async () => {
    await h?.close()
  })
  const inject = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown) =>
    h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload: payload as object } : {}) })
  const put = (rules: unknown[]) => inject('PUT', '/v1/config', { rules })
  const scoreIt = (body: object) =>
    inject('POST', '/v1/score', { event: 'checkout', user_id: 'u-1', ...body })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('saves rules as a new config version, compiles and enforces them; a no-op saves nothing', async () => {
    await setup()
    const saved = await put([bigOrder])
    expect(saved.statusCode).toBe(200)
    expect(saved.json().version).toBe(1)
    expect(saved.json().effective.rules).toEqual([bigOrder])
    expect((await put([bigOrder])).json().version).toBe(1)
    const small = (await scoreIt({ attributes: { amount: 20 } })).json()
    expect(small.reasons).toEqual([])
    const big = (await scoreIt({ attributes: { amount: 900, currency: 'EUR' } })).json()
    expect(big.score).toBe(45)
    expect(big.verdict).toBe('review')
    expect(big.reasons).toEqual(['rule:big_first_order'])
    expect(big.checks[0]).toMatchObject({
      check: 'custom',
      message: 'High-value checkout',
      evidence: { 'event.name': 'checkout', 'event.attributes.amount': 900 },
    })
    // Replay decides it again identically, rules included.
    const replay = (await inject('POST', '/v1/replay', { event_id: big.event_id })).json()
    expect(replay.identical).toBe(true)
    expect(replay.replayed.reasons).toEqual(['rule:big_first_order'])
    // Removing the rules is a new version; the event still replays under its own.
    expect((await put([])).json().version).toBe(2)
    expect((await scoreIt({ attributes: { amount: 900 } })).json().reasons).toEqual([])
    expect((await inject('POST', '/v1/replay', { event_id: big.event_id })).json().identical).toBe(true)
  })

  run(
    'refuses a rule it cannot compile with a 400 naming the rule and the position, saving nothing',
    async () => {
      await setup()
      const res = await put([
        bigOrder,
        { ...bigOrder, id: 'broken', when: "event.attributes.amount > 'x' &&" },
      ])
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toMatch(/^rules\[1\] \(broken\): syntax error: .* at position \d+$/)
      const unknown = await put([{ ...bigOrder, when: 'device.acounts > 3' }])
      expect(unknown.statusCode).toBe(400)
      expect(unknown.json().error).toMatch(
        /rules\[0\] \(big_first_order\): No such key: acounts at position 0/,
      )
      expect((await inject('GET', '/v1/config')).json().version).toBe(0)
      const bad = await put([{ ...bigOrder, then: { score: 101 } }])
      expect(bad.statusCode).toBe(400)
      expect(bad.json().error).toMatch(/rules\/0\/then|rules\.0\.then|then/)
    },
  )

  run('a shadow rule is recorded but never changes the answer', async () => {
    await setup()
    const body = { attributes: { amount: 900 }, ip: '8.8.8.8' }
    const before = (await scoreIt(body)).json()
    await put([{ ...bigOrder, mode: 'shadow', then: { verdict: 'block' } }])
    const after = (await scoreIt(body)).json()
    for (const k of ['score', 'verdict', 'reasons', 'checks', 'reason_text'] as const)
      expect(after[k]).toEqual(before[k])
    const row = await h.store.db.get<{ shadow_rules: string | null }>(
      'SELECT shadow_rules FROM events WHERE id = ?',
      [after.event_id],
    )
    expect(row?.shadow_rules).toBe('["big_first_order"]')
  })

  run('what-if: a proposed rule set reports transitions and how often each rule would fire', async () => {
    await setup()
    for (const amount of [10, 600, 700, 800]) await scoreIt({ attributes: { amount } })
    await scoreIt({ event: 'login' })
    const res = await inject('POST', '/v1/config/simulate', {
      rules: [
        { ...bigOrder, then: { verdict: 'block' } },
        { ...bigOrder, id: 'logins', when: "event.name == 'login'", mode: 'shadow' },
        { ...bigOrder, id: 'never', when: 'false', mode: 'off' },
      ],
    })
    expect(res.statusCode).toBe(200)
    const sim = res.json()
    expect(sim.events).toBe(5)
    expect(sim.transitions.allow.block).toBe(3)
    expect(sim.changed).toBe(3)
    expect(sim.rules).toEqual([
      { id: 'big_first_order', mode: 'enforce', fired: 3 },
      { id: 'logins', mode: 'shadow', fired: 1 },
      { id: 'never', mode: 'off', fired: 0 },
    ])
    // The proposal was not saved.
    expect((await inject('GET', '/v1/config')).json().version).toBe(0)
    const refused = await inject('POST', '/v1/config/simulate', { rules: [{ ...bigOrder, when: 'nope' }] })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error).toMatch(/^rules\[0\] \(big_first_order\)/)
  })

  run('bounds attributes: keys, count, value types and sizes, each a 400 naming the field', async () => {
    await setup()
    const ok = {
      amount: 12.5,
      currency: 'EUR',
      first_order: true,
      tags: Array.from({ length: 16 }, (_, i) => `t${i}`),
      note: 'x'.repeat(256),
    }
    expect((await scoreIt({ attributes: ok })).statusCode).toBe(200)
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))
    const cases: [unknown, RegExp][] = [
      [many, /attributes/],
      [{ Amount: 1 }, /attributes/],
      [{ ['a'.repeat(41)]: 1 }, /attributes/],
      [{ nested: { a: 1 } }, /attributes\.nested|attributes\/nested/],
      [{ note: 'x'.repeat(257) }, /attributes\.note|attributes\/note/],
      [{ tags: Array.from({ length: 17 }, () => 'x') }, /attributes\.tags|attributes\/tags/],
      [{ tags: [1] }, /attributes\.tags|attributes\/tags/],
      [{ nothing: null }, /attributes\.nothing|attributes\/nothing/],
    ]
    for (const [attributes, field] of cases) {
      const res = await scoreIt({ attributes })
      expect(res.statusCode, JSON.stringify(attributes).slice(0, 60)).toBe(400)
      expect(res.json().error).toMatch(field)
    }
  })
})
