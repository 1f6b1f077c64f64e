import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { retentionJob } from '../../src/jobs/retention.js'
import { Scheduler } from '../../src/jobs/scheduler.js'
import { TenantStore } from '../../src/store/access/tenants.js'
import { Invalidation } from '../../src/store/engine/invalidation.js'
import { PostgresDb } from '../../src/store/engine/postgres.js'
import { migrate } from '../../src/store/schema/migrations.js'
import { monthStart, PartitionStore, partitionName } from '../../src/store/schema/partitions.js'
import { retentionCutoff } from '../../src/store/schema/retention.js'
import { build, type Harness, openTestStore } from '../helpers/build.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const DAY = 86_400_000
const NOW = Date.UTC(2026, 10, 23, 12, 30, 0)
const TABLES = ['events', 'device_observations', 'lookups']

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const n = async (
  db: { get<T>(s: string, p?: (string | number)[]): Promise<T | undefined> },
  sql: string,
  p: (string | number)[] = [],
) => Number((await db.get<{ n: number }>(sql, p))?.n)

describe('monthly partitions of the event tables', () => {
  it('SQLite records migration 11 and keeps plain tables', async () => {
    const { store, cleanup } = await openTestStore('sqlite')
    cleanups.push(cleanup)
    expect(await n(store.db, 'SELECT COUNT(*) AS n FROM schema_migrations WHERE version = 11')).toBe(1)
    // Migration 34 (PostgreSQL only) is recorded too; SQLite keeps its tenant keys.
    expect(await n(store.db, 'SELECT COUNT(*) AS n FROM schema_migrations WHERE version = 34')).toBe(1)
    expect(
      await n(
        store.db,
        "SELECT COUNT(*) AS n FROM pragma_foreign_key_list('events') WHERE \"table\" = 'tenants'",
      ),
    ).toBe(1)
    expect(store.partitions.enabled).toBe(false)
    expect(await store.partitions.list()).toEqual([])
  })

  it.skipIf(!hasPg)(
    'PostgreSQL: partitioned parents, this and next month, a default, keys with created_ms',
    async () => {
      const { store, cleanup } = await openTestStore('postgres')
      cleanups.push(cleanup)
      const kinds = await store.db.all<{ relname: string; relkind: string }>(
        `SELECT relname, relkind FROM pg_class WHERE relnamespace = current_schema()::regnamespace
        AND relname IN ('events', 'device_observations', 'lookups', 'events_default', 'lookups_default', 'device_observations_default')
        ORDER BY relname`,
      )
      expect(kinds.filter((k) => k.relkind === 'p').map((k) => k.relname)).toEqual([
        'device_observations',
        'events',
        'lookups',
      ])
      expect(kinds.filter((k) => k.relkind === 'r')).toHaveLength(3)
      const names = (await store.partitions.list()).map((p) => p.name)
      const month = monthStart(Date.now())
      for (const t of TABLES) {
        expect(names).toContain(partitionName(t as 'events', month))
        expect(names).toContain(
          partitionName(
            t as 'events',
            Date.UTC(new Date(month).getUTCFullYear(), new Date(month).getUTCMonth() + 1, 1),
          ),
        )
      }
      const pk = await store.db.all<{ attname: string }>(
        `SELECT a.attname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
        WHERE c.conrelid = 'events'::regclass AND c.contype = 'p' ORDER BY a.attname`,
      )
      expect(pk.map((r) => r.attname)).toEqual(['created_ms', 'id'])
      // No foreign key points at events any more. Of the tenant keys only lookups' remains: migration 34
      // dropped those of the scoring tables, on the parents and so on every partition.
      expect(
        await n(store.db, "SELECT COUNT(*) AS n FROM pg_constraint WHERE confrelid = 'events'::regclass"),
      ).toBe(0)
      const tenantKeys = await store.db.all<{ t: string }>(
        `SELECT c.conrelid::regclass::text AS t FROM pg_constraint c
          WHERE c.contype = 'f' AND c.confrelid = 'tenants'::regclass
            AND (c.conrelid::regclass::text LIKE 'events%' OR c.conrelid::regclass::text LIKE 'device_observations%'
              OR c.conrelid::regclass::text LIKE 'lookups%')`,
      )
      expect(tenantKeys.length).toBeGreaterThan(1)
      expect(tenantKeys.every((k) => k.t.startsWith('lookups'))).toBe(true)
    },
  )

  it.skipIf(!hasPg)(
    'PostgreSQL: migrating a populated database in place keeps every row, id and index',
    async () => {
      const { schema, drop } = await createSchema()
      cleanups.push(drop)
      const db = new PostgresDb(PG_URL, { schema })
      cleanups.push(() => db.close())
      await migrate(db, { until: 10 })
      await db.run(
        "INSERT INTO tenants (id, name, share_network, rate_limit, monthly_quota, created_ms) VALUES ('t1', 'one', 0, 10, 10, 0)",
      )
      const now = Date.now()
      // 14 months, 2 months and 1 day back, plus one 80 months back (beyond the 60 months the migration
      // partitions: it lands in the default partition).
      const times = [now - 425 * DAY, now - 61 * DAY, now - DAY, now - 2430 * DAY]
      for (const [i, at] of times.entries()) {
        await db.run(
          `INSERT INTO events (id, tenant_id, created_ms, event, user_id, score, verdict, reasons, checks, asn_bad)
         VALUES (?, 't1', ?, 'login', ?, 0.5, 'allow', '[]', '[]', ?)`,
          [`e${i}`, at, `u${i}`, i % 2],
        )
        await db.run(
          `INSERT INTO device_observations (tenant_id, event_id, created_ms, device_id, resolved_id, token_id, rung, verdict)
         VALUES ('t1', ?, ?, 'fp', 'r', 'tok', 1, 'allow')`,
          [`e${i}`, at],
        )
        await db.run(
          "INSERT INTO lookups (tenant_id, kind, value_hash, hint, fraud_score, created_ms) VALUES ('t1', 'email', ?, 'h', 0.1, ?)",
          [`v${i}`, at],
        )
      }
      await db.run('DELETE FROM lookups WHERE value_hash = ?', ['v3'])
      // Later migrations add columns (null on old rows): the comparison leaves them out. The tag keeps
      // the two snapshots' statements apart (a prepared statement cannot change its result columns).
      const LATER = ['config_version', 'rules_version', 'inputs', 'shadow_rules', 'ip_block_hash']
      const snapshot = async (tag: string) => {
        const out: Record<string, unknown[]> = {}
        for (const t of TABLES) {
          const rows = await db.all<Record<string, unknown>>(
            `SELECT * FROM ${t} ORDER BY created_ms, id -- ${tag}`,
          )
          out[t] = rows.map((r) => {
            const kept = { ...r }
            for (const c of LATER) {
              if (c in kept) expect(kept[c]).toBeNull()
              delete kept[c]
            }
            return kept
          })
        }
        return out
      }
      const before = await snapshot('before')
      const indexesBefore = await db.all<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('events', 'device_observations', 'lookups') AND indexname NOT LIKE '%pkey' ORDER BY indexname",
      )
      await migrate(db)
      expect(await snapshot('after')).toEqual(before)
      const indexesAfter = await db.all<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('events', 'device_observations', 'lookups') AND indexname NOT LIKE '%pkey' ORDER BY indexname",
      )
      // Indexes later migrations add (after the partitioning, migration 11) are left out, as their columns are.
      const LATER_INDEXES = ['events_shadow']
      expect(indexesAfter.filter((i) => !LATER_INDEXES.includes(i.indexname))).toEqual(indexesBefore)
      const parts = new PartitionStore(db)
      const names = (await parts.list()).map((p) => p.name)
      for (const t of TABLES) {
        expect(names).toContain(partitionName(t as 'events', monthStart(now - 425 * DAY)))
        expect(names).not.toContain(partitionName(t as 'events', monthStart(now - 2430 * DAY)))
      }
      expect(names.filter((x) => x.startsWith('events_p')).length).toBeGreaterThanOrEqual(15)
      expect(await n(db, 'SELECT COUNT(*) AS n FROM events_default')).toBe(1)
      expect(
        await n(db, `SELECT COUNT(*) AS n FROM ${partitionName('events', monthStart(now - 425 * DAY))}`),
      ).toBe(1)
      // The identity continues after the old sequence (4 were handed out, the 4th row deleted).
      await db.run(
        "INSERT INTO lookups (tenant_id, kind, value_hash, hint, fraud_score, created_ms) VALUES ('t1', 'email', 'v9', 'h', 0.1, ?)",
        [now],
      )
      expect(await n(db, "SELECT id AS n FROM lookups WHERE value_hash = 'v9'")).toBe(5)
      // Tenant deletion still reaches every partition (through the parents: migration 34 dropped the
      // events' and observations' tenant keys, lookups cascade).
      expect(await new TenantStore(db, new Invalidation()).delete('t1')).toBe(true)
      for (const t of TABLES) expect(await n(db, `SELECT COUNT(*) AS n FROM ${t}`)).toBe(0)
    },
  )
})

describe('partitions and retention on PostgreSQL', () => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(!hasPg)(
    'rows of a month without partition move in when it is created; the job drops whole old months and trims the rest',
    async () => {
      h = await build({ engine: 'postgres' })
      const t = await h.tenant({ rateLimit: 100_000 })
      const score = (i: number) =>
        h.app.inject({
          method: 'POST',
          url: '/v1/score',
          headers: t.headers,
          payload: { event: 'login', user_id: `u${i}`, ip: '81.2.69.160', device_id: 'd'.repeat(32) },
        })
      const check = () =>
        h.app.inject({ method: 'POST', url: '/v1/check', headers: t.headers, payload: { ip: '81.2.69.160' } })
      // July has no partition yet: its rows land in the default partition until it is created.
      h.clock.set(Date.UTC(2026, 6, 10))
      for (let i = 0; i < 3; i++) expect((await score(i)).statusCode).toBe(200)
      expect((await check()).statusCode).toBe(200)
      const jul = partitionName('events', Date.UTC(2026, 6, 1))
      expect(
        await n(h.store.db, 'SELECT COUNT(*) AS n FROM events_default WHERE created_ms < ?', [
          NOW - 100 * DAY,
        ]),
      ).toBe(3)
      const made = await h.store.partitions.ensure(Date.UTC(2026, 6, 10), 3)
      expect(made.skipped).toEqual([])
      expect(made.created).toContainEqual({ name: jul, rows: 3 })
      expect(await n(h.store.db, `SELECT COUNT(*) AS n FROM ${jul}`)).toBe(3)
      expect(
        await n(h.store.db, 'SELECT COUNT(*) AS n FROM events_default WHERE created_ms < ?', [
          NOW - 100 * DAY,
        ]),
      ).toBe(0)

      // Mid-October (before a 30-day cutoff, in the boundary month), then two days back.
      h.clock.set(NOW - 45 * DAY)
      for (let i = 10; i < 12; i++) expect((await score(i)).statusCode).toBe(200)
      h.clock.set(NOW - 2 * DAY)
      for (let i = 20; i < 24; i++) expect((await score(i)).statusCode).toBe(200)
      expect((await check()).statusCode).toBe(200)
      h.clock.set(NOW)
      const cutoff = retentionCutoff(NOW, 30)

      const logs: string[] = []
      const warnings: string[] = []
      const jobs = new Scheduler([retentionJob(30)], {
        store: h.store,
        clock: h.clock,
        log: {
          info: (m: string) => logs.push(m),
          warn: (o: { partition?: string }, m: string) => warnings.push(`${m} ${o.partition}`),
        },
      } as never)
      const old = (table: string) =>
        n(h.store.db, `SELECT COUNT(*) AS n FROM ${table} WHERE created_ms < ?`, [cutoff])

      // A reader holding the events table makes the events drops miss their lock: the job leaves the
      // old events (with their rollup hours and observations) for the next run instead of deleting
      // them row by row.
      const schema = (await h.store.db.get<{ s: string }>('SELECT current_schema() AS s'))?.s
      const reader = new pg.Client({ connectionString: h.pgUrl!, options: `-c search_path=${schema}` })
      await reader.connect()
      await reader.query('BEGIN')
      await reader.query('SELECT COUNT(*) FROM events')
      expect(await jobs.runNow('retention')).toBe(true)
      await reader.query('ROLLBACK')
      await reader.end()
      expect(warnings).toContain(`retention: partition step left for the next run ${jul}`)
      expect(await old('events')).toBe(5)
      // Whole old months of observations and lookups went; the boundary month's observations wait
      // with their events.
      expect(await old('device_observations')).toBe(2)
      expect(await old('lookups')).toBe(0)
      expect(
        await n(h.store.db, 'SELECT COUNT(*) AS n FROM event_rollup WHERE hour_ms < ?', [cutoff]),
      ).toBeGreaterThan(0)

      // The next run, with the reader gone, drops them.
      expect(await jobs.runNow('retention')).toBe(true)
      await jobs.stop()
      const names = (await h.store.partitions.list()).map((p) => p.name)
      for (const table of TABLES) {
        expect(names).not.toContain(partitionName(table as 'events', Date.UTC(2026, 6, 1)))
        expect(names).not.toContain(partitionName(table as 'events', Date.UTC(2026, 8, 1)))
        expect(names).toContain(partitionName(table as 'events', Date.UTC(2026, 9, 1)))
        expect(names).toContain(partitionName(table as 'events', Date.UTC(2026, 11, 1)))
        expect(await n(h.store.db, `SELECT COUNT(*) AS n FROM ${table} WHERE created_ms < ?`, [cutoff])).toBe(
          0,
        )
      }
      expect(logs.some((l) => l.includes(`dropped partition ${jul}`))).toBe(true)
      expect(await n(h.store.db, 'SELECT COUNT(*) AS n FROM events')).toBe(4)
      expect(await n(h.store.db, 'SELECT COUNT(*) AS n FROM device_observations')).toBe(4)
      expect(await n(h.store.db, 'SELECT COUNT(*) AS n FROM lookups')).toBe(1)
      expect(await n(h.store.db, 'SELECT COUNT(*) AS n FROM event_rollup WHERE hour_ms < ?', [cutoff])).toBe(
        0,
      )
      const stats = await h.app.inject({ url: '/v1/stats?window_hours=8760', headers: t.headers })
      expect((stats.json() as { total: number }).total).toBe(4)
      // Scoring carries on into the remaining partitions.
      expect((await score(30)).statusCode).toBe(200)
      expect(await n(h.store.db, 'SELECT COUNT(*) AS n FROM events')).toBe(5)
    },
    60_000,
  )
})
