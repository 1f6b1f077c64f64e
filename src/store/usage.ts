import { type Db, q, type Work } from './db.js'

/** The calendar month (UTC) a metered unit belongs to, e.g. `2026-11`. */
export function usagePeriod(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7)
}

export class UsageStore {
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
    return row !== undefined
  }

  async used(tenantId: string, period: string): Promise<number> {
    const row = await this.db.get<{ used: number }>(
      'SELECT used FROM usage WHERE tenant_id = ? AND period = ?',
      [tenantId, period],
    )
    return Number(row?.used ?? 0)
  }
}
