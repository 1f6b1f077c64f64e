import { afterEach, describe, expect, it } from 'vitest'
import { type TableActivity, tablesToAnalyze } from '../../src/store/schema/statistics.js'
import { build, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const threshold = { base: 50, scale: 0.1 }
const table = (name: string, changed: number, rows: number, autovacuum = false): TableActivity => ({
  name,
  changed,
  rows,
  autovacuum,
})

describe('which tables verdict analyses itself', () => {
  it.each([
    ['a new table past the base threshold', [table('t', 51, 0)], ['t']],
    ['at the threshold exactly, not yet', [table('t', 50, 0)], []],
    ['a grown table past base + scale x rows', [table('t', 1051, 10_000)], ['t']],
    ['a grown table below it', [table('t', 1050, 10_000)], []],
    ['autovacuum on for the table: left to autovacuum', [table('t', 10_000, 0, true)], []],
    ['several, in name order', [table('b', 60, 0), table('a', 60, 0), table('c', 1, 0)], ['a', 'b']],
  ])('%s', (_what, tables, expected) => {
    expect(tablesToAnalyze(tables, threshold)).toEqual(expected)
  })
})

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('the planner-statistics job', () => {
  it('does nothing on SQLite', async () => {
    h = await build()
    expect(h.store.statistics.enabled).toBe(false)
    expect(await h.jobs.runNow('planner-statistics')).toBe(true)
    expect((await h.store.statistics.activity()).tables).toEqual([])
  })

  it.skipIf(!hasPg)(
    "on PostgreSQL analyses the month's events partition (the one its events went to) once it changed enough and autovacuum is off for it, and leaves the rest",
    async () => {
      h = await build({ engine: 'postgres' })
      const t = await h.tenant()
      for (let i = 0; i < 60; i++) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/score',
          headers: t.headers,
          payload: { event: 'signup', user_id: `u${i}` },
        })
        expect(res.statusCode).toBe(200)
      }
      const partition = (await h.store.db.get<{ p: string }>(
        'SELECT tableoid::regclass::text AS p FROM events LIMIT 1',
      ))!.p
      // Off for this table whatever the server's setting, as on a server run without autovacuum.
      await h.store.db.exec(`ALTER TABLE ${partition} SET (autovacuum_enabled = false)`)
      const analysed = async (name: string) =>
        (
          await h!.store.db.get<{ at: string | null }>(
            `SELECT last_analyze AS at FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ?`,
            [name],
          )
        )?.at ?? null
      // Backends report their row counts to the statistics collector within about a second.
      for (let tries = 0; ; tries++) {
        const row = (await h.store.statistics.activity()).tables.find((x) => x.name === partition)
        if ((row?.changed ?? 0) > 50) break
        if (tries > 100) throw new Error(`${partition} never showed its 60 inserts`)
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(await analysed(partition)).toBeNull()
      expect(await h.jobs.runNow('planner-statistics')).toBe(true)
      expect(await analysed(partition)).not.toBeNull()
      expect((await h.store.statistics.activity()).tables.find((x) => x.name === partition)?.rows).toBe(60)
      // A table with few changes (one tenant row) is not analysed.
      expect(await analysed('tenants')).toBeNull()
    },
  )
})
