import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const N = 2_600

/**
 * Rule performance reads shadow hits and labelled events a page at a time (issue 26, item 5): every row
 * of the window is counted once across pages, none outside it, and only the latest label of an event.
 */
describe.each<Engine>(['sqlite', 'postgres'])('rule performance reads in pages on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  let other: TestTenant
  let t0: number
  beforeAll(async () => {
    if (engine === 'postgres' && !hasPg) return
    h = await build({ engine })
    t = await h.tenant()
    other = await h.tenant()
    t0 = h.clock.now() - 10 * N
    // N events, several per millisecond (ids tie-break the keyset), all with a shadow hit of r1 and
    // every third one of r2; every event but the first 100 labelled, every fifth labelled twice
    // (legit, then fraud later: the later label counts).
    for (const tenant of [t.tenantId, other.tenantId])
      await h.store.db.run(
        `INSERT INTO events (id, tenant_id, created_ms, event, user_id, score, verdict, reasons, checks, asn_bad, shadow_rules)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
         SELECT CAST(? AS TEXT) || '-' || CAST(100000 + i AS TEXT), ?, CAST(? AS BIGINT) + (i / 3), 'login', 'u', 10, 'allow',
                '["geo_mismatch"]', '[]', 0,
                CASE WHEN i % 3 = 0 THEN '["r1","r2"]' ELSE '["r1"]' END
           FROM n`,
        [tenant, tenant, t0],
      )
    await h.store.db.run(
      `INSERT INTO labels (tenant_id, event_id, label, created_ms)
       SELECT tenant_id, id, 'legit', created_ms + 1 FROM events WHERE tenant_id = ? AND id > ?`,
      [t.tenantId, `${t.tenantId}-100100`],
    )
    await h.store.db.run(
      `INSERT INTO labels (tenant_id, event_id, label, created_ms)
       SELECT tenant_id, id, 'fraud', created_ms + 2 FROM events
        WHERE tenant_id = ? AND id > ? AND CAST(SUBSTR(id, LENGTH(id) - 5) AS INTEGER) % 5 = 0`,
      [t.tenantId, `${t.tenantId}-100100`],
    )
  }, 120_000)
  afterAll(async () => {
    await h?.close()
  })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('counts every shadow hit of the window once across pages, and none outside it', async () => {
    const all = await h.store.rulePerformance.shadowFired(t.tenantId, t0 - 1, t0 + N)
    expect(all.get('r1')).toBe(N)
    expect(all.get('r2')).toBe(Math.floor(N / 3))
    // (since, until]: the events of the millisecond `since` are out, those of `until` in.
    const part = await h.store.rulePerformance.shadowFired(t.tenantId, t0 + 100, t0 + 500)
    expect(part.get('r1')).toBe(400 * 3)
  })

  run('lists every labelled event of the window once, with its latest label', async () => {
    const rows = await h.store.rulePerformance.labelled(t.tenantId, t0 - 1, t0 + N)
    const labelled = N - 100
    expect(rows.length).toBe(labelled)
    expect(rows.filter((r) => r.outcome === 'fraud').length).toBe(labelled / 5)
    expect(rows.every((r) => r.shadow.includes('r1'))).toBe(true)
    expect(await h.store.rulePerformance.labelled(other.tenantId, t0 - 1, t0 + N)).toEqual([])
  })
})
