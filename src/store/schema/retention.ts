import { trimLinks } from '../devices/links.js'
import type { Db } from '../engine/db.js'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The moment before which data is deleted: `days` back, on an hour boundary (the rollup's grain). */
export function retentionCutoff(nowMs: number, days: number): number {
  const raw = nowMs - days * DAY_MS
  return raw - (raw % HOUR_MS)
}

/**
 * Deletes what is older than the retention period, in bounded batches so that no transaction holds
 * the write lock for long. Events take their device observations with them (foreign key cascade);
 * the hourly rollup and the daily ASN counters lose the same hours and days, so stats and rates agree
 * with the events that remain.
 */
export class RetentionStore {
  constructor(private readonly db: Db) {}

  /** Deletes up to `batch` of the tenant's events older than `cutoffMs`; returns how many went. */
  async events(tenantId: string, cutoffMs: number, batch: number): Promise<number> {
    return this.db.run(
      `DELETE FROM events WHERE id IN (
         SELECT id FROM events WHERE tenant_id = ? AND created_ms < ? ORDER BY created_ms LIMIT ?)`,
      [tenantId, cutoffMs, batch],
    )
  }

  async lookups(tenantId: string, cutoffMs: number, batch: number): Promise<number> {
    return this.db.run(
      `DELETE FROM lookups WHERE id IN (
         SELECT id FROM lookups WHERE tenant_id = ? AND created_ms < ? ORDER BY created_ms LIMIT ?)`,
      [tenantId, cutoffMs, batch],
    )
  }

  /** Beacon observations of every tenant (the score joins only the last 30 minutes of them). */
  async beacons(cutoffMs: number, batch: number): Promise<number> {
    return this.db.run(
      `DELETE FROM beacon_observations WHERE id IN (
         SELECT id FROM beacon_observations WHERE created_ms < ? ORDER BY created_ms LIMIT ?)`,
      [cutoffMs, batch],
    )
  }

  // ---- device links (store/devices/links.ts trimLinks) ----
  /** Deletes up to `batch` of the tenant's device links last seen before the cutoff; returns how many went. */
  async deviceLinks(tenantId: string, cutoffMs: number, batch: number): Promise<number> {
    return this.db.tx(() => trimLinks(tenantId, cutoffMs, batch))
  }
  // ---- end device links ----

  /** The rollup hours and ASN days that lie wholly before the cutoff. */
  async aggregates(tenantId: string, cutoffMs: number): Promise<number> {
    const hours = await this.db.run('DELETE FROM event_rollup WHERE tenant_id = ? AND hour_ms < ?', [
      tenantId,
      cutoffMs,
    ])
    const days = await this.db.run('DELETE FROM asn_daily WHERE day_ms + ? <= ? AND tenant_id = ?', [
      DAY_MS,
      cutoffMs,
      tenantId,
    ])
    return hours + days
  }
}
