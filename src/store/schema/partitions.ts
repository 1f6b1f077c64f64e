import { type Db, q } from '../engine/db.js'

/**
 * Monthly partitions of the event tables on PostgreSQL (created by migration 11). Each table has one
 * partition per UTC month, named `<table>_pYYYY_MM` and holding `created_ms` from the month's first
 * millisecond up to the next month's, and a `<table>_default` partition that takes rows outside every
 * month (a clock far off, a month not created in time). On SQLite every method does nothing.
 *
 * Partition DDL needs a short exclusive lock on the parent table, which waits for the scoring
 * transactions in flight and makes new ones wait behind it. Each DDL step therefore runs in its own
 * transaction with a short `lock_timeout`: if the lock does not come in time the step is skipped and
 * the next run (start-up, then the hourly retention job) tries again. Nothing depends on it happening
 * now: an absent month lands in the default partition, and an old month that could not be dropped
 * stays (with its events' rollup hours) until a later run drops it.
 */
export const PARTITIONED_TABLES = ['events', 'device_observations', 'lookups'] as const
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number]

/** How long a partition DDL step waits for its lock before giving up until the next run. */
export const PARTITION_LOCK_TIMEOUT_MS = 500

export interface MonthPartition {
  table: PartitionedTable
  name: string
  fromMs: number
  toMs: number
}

export interface PartitionChange {
  name: string
  /** Rows the partition held (PostgreSQL's estimate, for the log) or moved into it from the default. */
  rows: number
}

export interface PartitionReport {
  created: PartitionChange[]
  dropped: PartitionChange[]
  /** Steps that did not get their lock in time (or failed otherwise); retried on the next run. */
  skipped: { name: string; error: string }[]
}

export function monthStart(ms: number): number {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

export function nextMonth(ms: number): number {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

export function partitionName(table: PartitionedTable, monthMs: number): string {
  const d = new Date(monthMs)
  return `${table}_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`
}

const NAME = /^(events|device_observations|lookups)_p(\d{4})_(\d{2})$/

/** The month partition a name denotes, or null for the default partition and anything else. */
export function parsePartition(name: string): MonthPartition | null {
  const m = NAME.exec(name)
  if (!m) return null
  const fromMs = Date.UTC(Number(m[2]), Number(m[3]) - 1, 1)
  return { table: m[1] as PartitionedTable, name, fromMs, toMs: nextMonth(fromMs) }
}

const errorText = (err: unknown) => (err as Error).message ?? String(err)

export class PartitionStore {
  constructor(private readonly db: Db) {}

  get enabled(): boolean {
    return this.db.dialect === 'postgres'
  }

  /** The month partitions of the event tables in the current schema, oldest first. */
  async list(): Promise<(MonthPartition & { rows: number })[]> {
    if (!this.enabled) return []
    const rows = await this.db.all<{ name: string; rows: number }>(
      `SELECT c.relname AS name, GREATEST(c.reltuples, 0) AS rows
         FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = current_schema() AND p.relname IN ('events', 'device_observations', 'lookups')`,
    )
    const out: (MonthPartition & { rows: number })[] = []
    for (const r of rows) {
      const p = parsePartition(r.name)
      if (p) out.push({ ...p, rows: Number(r.rows) })
    }
    return out.sort((a, b) => a.fromMs - b.fromMs || a.name.localeCompare(b.name))
  }

  /**
   * Creates the partitions of the month of `nowMs` and of the `ahead` months after it where missing.
   * Rows of such a month already in the default partition move into the new partition.
   */
  async ensure(nowMs: number, ahead = 1, report = emptyReport()): Promise<PartitionReport> {
    if (!this.enabled) return report
    const existing = new Set((await this.list()).map((p) => p.name))
    for (const table of PARTITIONED_TABLES) {
      let from = monthStart(nowMs)
      for (let i = 0; i <= ahead; i++, from = nextMonth(from)) {
        const name = partitionName(table, from)
        if (existing.has(name)) continue
        try {
          const rows = await this.create(table, from)
          report.created.push({ name, rows })
        } catch (err) {
          report.skipped.push({ name, error: errorText(err) })
        }
      }
    }
    return report
  }

  /**
   * Drops the month partitions that lie wholly before `cutoffMs` (observations first, then events,
   * then lookups: nothing ever points at a row already gone). Rows older than the cutoff in the
   * boundary month and in the default partition are left to the bounded deletes.
   */
  async dropBefore(cutoffMs: number, report = emptyReport()): Promise<PartitionReport> {
    if (!this.enabled) return report
    const order: readonly PartitionedTable[] = ['device_observations', 'events', 'lookups']
    const old = (await this.list()).filter((p) => p.toMs <= cutoffMs)
    for (const table of order) {
      for (const p of old.filter((x) => x.table === table)) {
        try {
          await this.db.tx(function* () {
            yield* q.run(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`)
            yield* q.run(`DROP TABLE IF EXISTS ${p.name}`)
          })
          report.dropped.push({ name: p.name, rows: p.rows })
        } catch (err) {
          report.skipped.push({ name: p.name, error: errorText(err) })
        }
      }
    }
    return report
  }

  /**
   * Deletes the tenant's oldest rows of `events` (with their device observations) or `lookups` older
   * than `cutoffMs`, about `batch` at a time (rows sharing the last row's millisecond go together):
   * what remains past the period after whole months are dropped (the boundary month, the default
   * partition). Each batch deletes a time slice through the (tenant, time) index, so its cost does not
   * depend on the partition's size or on the plan the join of a key list would get. Observations go
   * by their events' ids (there is no cascade between the partitioned tables). Returns the rows
   * deleted from `table`.
   */
  trim(table: 'events' | 'lookups', tenantId: string, cutoffMs: number, batch: number): Promise<number> {
    const offset = Math.max(0, Math.floor(batch) - 1)
    return this.db.tx(function* () {
      const edge = yield* q.get<{ t: number }>(
        `SELECT created_ms AS t FROM ${table} WHERE tenant_id = ? AND created_ms < ?
          ORDER BY created_ms OFFSET ${offset} LIMIT 1`,
        [tenantId, cutoffMs],
      )
      const until = edge ? Math.min(Number(edge.t) + 1, cutoffMs) : cutoffMs
      if (table === 'lookups')
        return yield* q.run('DELETE FROM lookups WHERE tenant_id = ? AND created_ms < ?', [tenantId, until])
      const gone = yield* q.all<{ id: string }>(
        'DELETE FROM events WHERE tenant_id = ? AND created_ms < ? RETURNING id',
        [tenantId, until],
      )
      if (gone.length > 0)
        yield* q.run(
          `DELETE FROM device_observations WHERE tenant_id = ? AND created_ms < ?
             AND event_id = ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))`,
          [tenantId, until, JSON.stringify(gone.map((r) => r.id))],
        )
      return gone.length
    })
  }

  /** One month's partition; returns how many rows moved in from the default partition. */
  private create(table: PartitionedTable, fromMs: number): Promise<number> {
    const name = partitionName(table, fromMs)
    const toMs = nextMonth(fromMs)
    const range = `created_ms >= ${fromMs} AND created_ms < ${toMs}`
    return this.db.tx(function* () {
      yield* q.run(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`)
      const stray = yield* q.get(`SELECT 1 AS x FROM ${table}_default WHERE ${range} LIMIT 1`)
      if (!stray) {
        // Another node may have created it meanwhile: IF NOT EXISTS makes that a no-op.
        yield* q.run(
          `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table} FOR VALUES FROM (${fromMs}) TO (${toMs})`,
        )
        return 0
      }
      // Rows of the month sit in the default partition: the new partition cannot be created over
      // them, so they move in, with inserts held off (exclusive lock) until the move commits.
      yield* q.run(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
      yield* q.run(`CREATE TEMP TABLE partition_move (LIKE ${table}) ON COMMIT DROP`)
      const moved = yield* q.run(
        `WITH m AS (DELETE FROM ${table}_default WHERE ${range} RETURNING *) INSERT INTO partition_move SELECT * FROM m`,
      )
      yield* q.run(`CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES FROM (${fromMs}) TO (${toMs})`)
      yield* q.run(`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM partition_move`)
      return moved
    })
  }
}

export const emptyReport = (): PartitionReport => ({ created: [], dropped: [], skipped: [] })
