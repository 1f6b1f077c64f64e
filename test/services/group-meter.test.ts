import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiError } from '../../src/errors.js'
import { createTenant } from '../../src/services/access/tenants.js'
import { GroupWriter, type Job } from '../../src/services/runtime/group-writer.js'
import { usagePeriod } from '../../src/store/access/usage.js'
import { openStore, type Store } from '../../src/store/index.js'
import { ManualClock } from '../../src/util/clock.js'
import { eventually } from '../helpers/app.js'
import type { Engine } from '../helpers/build.js'
import { createDatabase, pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
const PERIOD = usagePeriod(NOW)

let cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const fn of cleanups.reverse()) await fn()
  cleanups = []
})

/** Two stores on one database, as two nodes (or two processes on one SQLite file) have. */
async function twoStores(engine: Engine): Promise<{ a: Store; b: Store; schema: string; url: string }> {
  if (engine === 'postgres') {
    const { url, schema, drop } = await createDatabase()
    const a = await openStore({ kind: 'postgres', url }, { pgSchema: schema })
    const b = await openStore({ kind: 'postgres', url }, { pgSchema: schema })
    cleanups.push(
      drop,
      () => a.close(),
      () => b.close(),
    )
    return { a, b, schema, url }
  }
  const dir = mkdtempSync(join(tmpdir(), 'verdict-meter-'))
  const file = join(dir, 'verdict.db')
  const a = await openStore({ kind: 'sqlite', file })
  const b = await openStore({ kind: 'sqlite', file })
  cleanups.push(
    async () => rmSync(dir, { recursive: true, force: true }),
    () => a.close(),
    () => b.close(),
  )
  return { a, b, schema: '', url: '' }
}

/** A scoring-like job: meters `units`, then records that many lookups (what the units paid for). */
const job = (store: Store, tenantId: string, units: number, quota: number): Job<number> =>
  function* (_counters, meter) {
    if (!(yield* meter.take(tenantId, PERIOD, units, quota))) throw new ApiError('quota_exceeded', 'over')
    const rows = Array.from({ length: units }, (_, i) => ({
      kind: 'ip' as const,
      valueHash: `h${i}`,
      hint: 'x',
      fraudScore: 0,
      createdMs: NOW,
    }))
    yield* store.lookups.add(tenantId, rows)
    return units
  }

const count = async (store: Store, tenantId: string) =>
  Number(
    (await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM lookups WHERE tenant_id = ?', [tenantId]))
      ?.n,
  )

describe.each<Engine>(['sqlite', 'postgres'])('group meter on %s', (engine) => {
  it.skipIf(engine === 'postgres' && !hasPg)(
    'jobs side by side that meet the tenant at once share its reading, and all of them are metered',
    async () => {
      const { a } = await twoStores(engine)
      const { tenantId } = await createTenant(a, new ManualClock(NOW), { name: 'side by side' })
      const writer = new GroupWriter(a.db, a.usage)
      const quota = 5
      // Submitted in one tick: one group, each job beside the one before it (no key in common).
      const jobs = Array.from({ length: 8 }, (_, i) =>
        writer.submit(job(a, tenantId, 1, quota), [], [`k${i}`]).catch((e: unknown) => {
          expect(e).toBeInstanceOf(ApiError)
          return 0
        }),
      )
      expect((await Promise.all(jobs)).reduce((s, n) => s + n, 0)).toBe(quota)
      expect(await a.usage.used(tenantId, PERIOD)).toBe(quota)
      expect(await count(a, tenantId)).toBe(quota)
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'two writers metering one tenant at once accept exactly the quota and record only what they metered',
    async () => {
      const { a, b } = await twoStores(engine)
      const { tenantId } = await createTenant(a, new ManualClock(NOW), { name: 'metered' })
      const writers = [new GroupWriter(a.db, a.usage), new GroupWriter(b.db, b.usage)]
      const quota = 97
      // 120 jobs of 1 unit and 20 of 3 (a batch), alternating between the writers: 180 units asked.
      const jobs = Array.from({ length: 140 }, (_, i) => {
        const store = i % 2 ? b : a
        return writers[i % 2]!.submit(job(store, tenantId, i < 120 ? 1 : 3, quota)).then(
          (units) => units,
          (e: unknown) => {
            expect(e).toBeInstanceOf(ApiError)
            return 0
          },
        )
      })
      const accepted = (await Promise.all(jobs)).reduce((s, n) => s + n, 0)
      // Every refusal left the room for no further 1-unit job: the quota is reached, never passed.
      expect(accepted).toBe(quota)
      expect(await a.usage.used(tenantId, PERIOD)).toBe(quota)
      expect(await count(a, tenantId)).toBe(quota)
    },
    60_000,
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'a group whose final meter write finds the room taken meanwhile runs again exactly',
    async () => {
      const { a, schema, url } = await twoStores(engine)
      const { tenantId } = await createTenant(a, new ManualClock(NOW), { name: 'overtaken' })
      const quota = 3
      await a.db.run('INSERT INTO usage (tenant_id, period, used) VALUES (?, ?, 0)', [tenantId, PERIOD])
      const writer = new GroupWriter(a.db, a.usage)
      if (engine === 'sqlite') {
        // One writer at a time on SQLite: the read inside the transaction is already exact.
        await a.db.run('UPDATE usage SET used = 2 WHERE tenant_id = ?', [tenantId])
      } else {
        // Another node meters 2 units and holds its transaction open while the group reads 0.
        const other = new pg.Client({ connectionString: url })
        await other.connect()
        cleanups.push(() => other.end())
        await other.query('BEGIN')
        await other.query(`UPDATE ${schema}.usage SET used = used + 2 WHERE tenant_id = $1`, [tenantId])
        const pid = Number((await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid)
        const pending = [1, 2, 3].map(() =>
          writer.submit(job(a, tenantId, 1, quota)).catch((e: unknown) => e),
        )
        // The group's final write waits on the other transaction's row lock; then that one commits.
        const blocked = async () =>
          Number(
            (
              await other.query(
                'SELECT COUNT(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
                [pid],
              )
            ).rows[0].n,
          ) > 0
        expect(await eventually(blocked, 10_000, 20)).toBe(true)
        await other.query('COMMIT')
        const outcomes = await Promise.all(pending)
        expect(outcomes.filter((o) => o === 1)).toHaveLength(1)
        expect(outcomes.filter((o) => o instanceof ApiError)).toHaveLength(2)
        expect(await a.usage.used(tenantId, PERIOD)).toBe(quota)
        expect(await count(a, tenantId)).toBe(1)
        return
      }
      const outcomes = await Promise.all(
        [1, 2, 3].map(() => writer.submit(job(a, tenantId, 1, quota)).catch((e: unknown) => e)),
      )
      expect(outcomes.filter((o) => o === 1)).toHaveLength(1)
      expect(await a.usage.used(tenantId, PERIOD)).toBe(quota)
      expect(await count(a, tenantId)).toBe(1)
    },
    60_000,
  )
})
