import { afterEach, describe, expect, it } from 'vitest'
import { rulesTable } from '../../src/cli/report.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const DAY = 86_400_000

const rule = (id: string, when: string, mode: string) => ({
  id,
  when,
  then: { score: 10 },
  mode,
  rollout: 100,
})

describe.each<Engine>(['sqlite', 'postgres'])('custom rules in GET /v1/rules/performance on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  let n = 0
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
  const scoreLabelled = async (amount: number, label: string | null) => {
    const r = await api('POST', '/v1/score', {
      event: 'checkout',
      user_id: `u-${++n}`,
      attributes: { amount },
    })
    expect(r.statusCode).toBe(200)
    if (label)
      expect((await api('POST', '/v1/label', { event_id: r.json().event_id, label })).statusCode).toBe(200)
    return r.json()
  }

  run(
    'reports enforced and shadow rules with fired, labels, precision and recall; unfired rules show zero',
    async () => {
      h = await build({ engine })
      t = await h.tenant()
      const saved = await api('PUT', '/v1/config', {
        rules: [
          rule('big', 'event.attributes.amount > 500', 'enforce'),
          rule('huge_shadow', 'event.attributes.amount > 900', 'shadow'),
          rule('never', 'event.attributes.amount < 0', 'enforce'),
          rule('never_shadow', 'event.attributes.amount < 0', 'shadow'),
          rule('idle', 'true', 'off'),
        ],
      })
      expect(saved.statusCode).toBe(200)
      // big holds on 6: 3 fraud, 1 legit, 2 unlabelled; huge_shadow on 3 of them: 2 fraud, 1 unlabelled.
      await scoreLabelled(950, 'fraud')
      await scoreLabelled(990, 'fraud')
      await scoreLabelled(999, null)
      await scoreLabelled(600, 'fraud')
      await scoreLabelled(700, 'legit')
      await scoreLabelled(800, null)
      // Neither: 1 fraud (recall's denominator), 2 legit.
      await scoreLabelled(10, 'fraud')
      await scoreLabelled(20, 'legit')
      await scoreLabelled(30, 'legit')
      h.clock.advance(2 * 3600_000)
      const res = await api('GET', '/v1/rules/performance')
      expect(res.statusCode).toBe(200)
      const rows = res.json().rules as Record<string, unknown>[]
      const custom = rows.filter((r) => r['rule_id'] !== undefined)
      expect(custom).toEqual([
        {
          reason: 'rule:big',
          rule_id: 'big',
          shadow: false,
          fired: 6,
          fraud: 3,
          legit: 1,
          precision: 0.75,
          precision_low: expect.any(Number),
          precision_high: expect.any(Number),
          recall: 0.75,
          suggested_weight: null,
        },
        {
          reason: 'rule:huge_shadow',
          rule_id: 'huge_shadow',
          shadow: true,
          fired: 3,
          fraud: 2,
          legit: 0,
          precision: 1,
          precision_low: expect.any(Number),
          precision_high: 1,
          recall: 0.5,
          suggested_weight: null,
        },
        expect.objectContaining({
          reason: 'rule:never',
          rule_id: 'never',
          shadow: false,
          fired: 0,
          precision: null,
        }),
        expect.objectContaining({
          reason: 'rule:never_shadow',
          rule_id: 'never_shadow',
          shadow: true,
          fired: 0,
        }),
      ])
      // Built-in rows carry neither field, and an off rule has no row.
      for (const r of rows.filter((r) => !String(r['reason']).startsWith('rule:'))) {
        expect(r).not.toHaveProperty('rule_id')
        expect(r).not.toHaveProperty('shadow')
      }
      expect(rows.some((r) => r['rule_id'] === 'idle')).toBe(false)
      expect(res.json().labelled_events).toBe(7)
      // The CLI's table marks the shadow row.
      const table = rulesTable(res.json())
      expect(table).toMatch(/^rule:huge_shadow \(shadow\)\s+3\s+2\s+0\s+1\.00/m)
      expect(table).toMatch(/^rule:big\s+6\s+3\s+1\s+0\.75/m)
      // Promoted to enforce, the shadow rule's old hits stay in the shadow row, new ones count as enforced.
      await api('PUT', '/v1/config', {
        rules: [
          rule('big', 'event.attributes.amount > 500', 'enforce'),
          rule('huge_shadow', 'event.attributes.amount > 900', 'enforce'),
        ],
      })
      await scoreLabelled(2000, 'fraud')
      const after = (await api('GET', '/v1/rules/performance')).json().rules as Record<string, unknown>[]
      expect(after.find((r) => r['rule_id'] === 'huge_shadow' && r['shadow'] === false)).toMatchObject({
        fired: 1,
        fraud: 1,
      })
      expect(after.find((r) => r['rule_id'] === 'huge_shadow' && r['shadow'] === true)).toMatchObject({
        fired: 3,
        fraud: 2,
      })
      // Outside the window, shadow hits no longer count.
      h.clock.advance(31 * DAY)
      const later = (await api('GET', '/v1/rules/performance')).json().rules as Record<string, unknown>[]
      expect(later.find((r) => r['rule_id'] === 'huge_shadow' && r['shadow'] === true)).toBeUndefined()
    },
  )
})
