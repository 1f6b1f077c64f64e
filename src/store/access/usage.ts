import { type Db, q, type Work } from '../engine/db.js'
import { monthStart, nextMonth } from '../schema/partitions.js'
import { holdTenant, tenantRowLock } from './tenant-hold.js'

/** The month last asked for, from its first millisecond up to the next month's (UTC). */
let month = { fromMs: 0, toMs: 0, period: '' }

/** The calendar month (UTC) a metered unit belongs to, e.g. `2026-11`. */
export function usagePeriod(nowMs: number): string {
  // Asked several times per request: formatting a date is most of the cost, and the month rarely changes.
  if (nowMs >= month.fromMs && nowMs < month.toMs) return month.period
  const fromMs = monthStart(nowMs)
  month = { fromMs, toMs: nextMonth(fromMs), period: new Date(nowMs).toISOString().slice(0, 7) }
  return month.period
}

const READ = 'SELECT used FROM usage WHERE tenant_id = ? AND period = ?'

/** The SQLSTATE of `quota_overtaken` (PostgreSQL). */
export const QUOTA_OVERTAKEN = 'VQ001'

export class UsageStore {
  /** The last meter reading this process saw per tenant and period: a lower bound between its writes. */
  private readonly seen = new Map<string, number>()

  constructor(private readonly db: Db) {}

  /**
   * Atomically adds `units` to this month's meter unless that would pass `quota`.
   * Returns false (and changes nothing) when the quota would be exceeded.
   */
  *meter(tenantId: string, period: string, units: number, quota: number): Work<boolean> {
    if (units > quota) return false
    const row = yield* q.get<{ used: number }>(
      `INSERT INTO usage (tenant_id, period, used) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, period) DO UPDATE SET used = usage.used + excluded.used
       WHERE usage.used + excluded.used <= ?
       RETURNING used`,
      [tenantId, period, units, quota],
    )
    if (row === undefined) return false
    this.remember(`${tenantId}\u0000${period}`, Number(row.used))
    return true
  }

  /**
   * On PostgreSQL, `meter` for a statement whose result is not read (a group's end goes out with its
   * COMMIT, store/engine/postgres.ts): when the units no longer fit, the statement fails with
   * QUOTA_OVERTAKEN (migration 36's `quota_overtaken`) instead of changing nothing, so the transaction
   * cannot commit. Call `noteMetered` once it has committed.
   */
  *meterOrFail(tenantId: string, period: string, units: number, quota: number): Work<void> {
    yield* q.run(
      `INSERT INTO usage (tenant_id, period, used) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, period) DO UPDATE SET used = CASE
         WHEN usage.used + excluded.used <= ? THEN usage.used + excluded.used
         ELSE quota_overtaken(usage.tenant_id, usage.period) END`,
      [tenantId, period, units, quota],
    )
  }

  /** A committed `meterOrFail`: the month's reading is at least `used` (what the group read plus its units). */
  noteMetered(tenantId: string, period: string, used: number): void {
    const key = `${tenantId}\u0000${period}`
    this.remember(key, Math.max(this.seen.get(key) ?? 0, used))
  }

  /** Keeps a reading, in a map bounded by forgetting everything past 100,000 tenant-months. */
  private remember(key: string, used: number): void {
    if (this.seen.size > 100_000) this.seen.clear()
    this.seen.set(key, used)
  }

  /**
   * Whether `units` may still fit in the quota, for refusing work before it is done. Answers from the
   * last reading this process saw when that says they fit (the meter itself is exact and still refuses
   * if another process used the room meanwhile); asks the database whenever they look like they do not.
   */
  async mayFit(tenantId: string, period: string, units: number, quota: number): Promise<boolean> {
    if (units > quota) return false
    const seen = this.seen.get(`${tenantId}\u0000${period}`)
    if (seen !== undefined && seen + units <= quota) return true
    return (await this.used(tenantId, period)) + units <= quota
  }

  /**
   * This month's reading inside a transaction, without locking the usage row; null when the tenant is
   * gone. The same statement locks the tenant's row against deletion until the transaction ends (see
   * tenant-hold.ts): a scoring group reads this before a tenant's first job writes anything.
   */
  *reading(tenantId: string, period: string): Work<number | null> {
    const row = yield* q.get<{ used: number | null }>(
      `SELECT (SELECT used FROM usage WHERE tenant_id = tenants.id AND period = ?) AS used FROM tenants
        WHERE id = ?${tenantRowLock(this.db.dialect, 'KEY SHARE')}`,
      [period, tenantId],
    )
    return row === undefined ? null : Number(row.used ?? 0)
  }

  /**
   * This month's reading with the row locked until the transaction ends (created at 0 when missing,
   * so there is a row to lock): no other transaction can meter the tenant meanwhile. Holds the tenant's
   * row as `reading` does; null when the tenant is gone.
   */
  *lockedReading(tenantId: string, period: string): Work<number | null> {
    if (!(yield* holdTenant(this.db.dialect, tenantId))) return null
    const row = yield* q.get<{ used: number }>(
      `INSERT INTO usage (tenant_id, period, used) VALUES (?, ?, 0)
       ON CONFLICT (tenant_id, period) DO UPDATE SET used = usage.used
       RETURNING used`,
      [tenantId, period],
    )
    return Number(row?.used ?? 0)
  }

  /** The last reading this process saw (read once from the database when it has none), for headers. */
  async peek(tenantId: string, period: string): Promise<number> {
    const key = `${tenantId}\u0000${period}`
    const seen = this.seen.get(key)
    if (seen !== undefined) return seen
    const used = await this.used(tenantId, period)
    if (!this.seen.has(key)) this.remember(key, used)
    return used
  }

  async used(tenantId: string, period: string): Promise<number> {
    const row = await this.db.get<{ used: number }>(READ, [tenantId, period])
    return Number(row?.used ?? 0)
  }
}
