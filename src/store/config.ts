import type { Db } from './db.js'

export type ConfigSection = 'weights' | 'thresholds'
export type Overrides = Record<ConfigSection, Record<string, number>>

/** Overrides are read on every score; a short in-process cache spares the query. */
const CACHE_MS = 2000

export class ConfigStore {
  private readonly cache = new Map<string, { at: number; value: Overrides }>()

  constructor(private readonly db: Db) {}

  /**
   * Cached overrides. Writes through this process invalidate at once; a change made by another process
   * sharing the database shows within two seconds.
   */
  async cachedOverrides(tenantId: string, nowMs: number): Promise<Overrides> {
    const hit = this.cache.get(tenantId)
    if (hit && nowMs - hit.at >= 0 && nowMs - hit.at < CACHE_MS) return hit.value
    const value = await this.overrides(tenantId)
    if (this.cache.size > 10_000) this.cache.clear()
    this.cache.set(tenantId, { at: nowMs, value })
    return value
  }

  async overrides(tenantId: string): Promise<Overrides> {
    const rows = await this.db.all<{ section: ConfigSection; key: string; value: number }>(
      'SELECT section, key, value FROM tenant_config WHERE tenant_id = ?',
      [tenantId],
    )
    const out: Overrides = { weights: {}, thresholds: {} }
    for (const r of rows) out[r.section][r.key] = Number(r.value)
    return out
  }

  /** Writes every override of the patch in one transaction. */
  async set(tenantId: string, patch: Overrides): Promise<void> {
    this.cache.delete(tenantId)
    await this.db.tx(async (sql) => {
      for (const section of ['weights', 'thresholds'] as const) {
        for (const [key, value] of Object.entries(patch[section])) {
          await sql.run(
            `INSERT INTO tenant_config (tenant_id, section, key, value) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant_id, section, key) DO UPDATE SET value = excluded.value`,
            [tenantId, section, key, value],
          )
        }
      }
    })
    this.cache.delete(tenantId)
  }
}
