import { type Db, q } from './db.js'
import { Cached, type Invalidation, tenantScoped } from './invalidation.js'

export type ConfigSection = 'weights' | 'thresholds'
export type Overrides = Record<ConfigSection, Record<string, number>>

export class ConfigStore {
  private readonly cache: Cached<string, Overrides>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.cache = new Cached(inv, tenantScoped('config'))
  }

  /** The tenant's overrides from memory; every write (here or in another process) drops the copy. */
  cachedOverrides(tenantId: string): Promise<Overrides> {
    return this.cache.get(tenantId, () => this.overrides(tenantId))
  }

  async overrides(tenantId: string): Promise<Overrides> {
    return toOverrides(
      await this.db.all<{ section: ConfigSection; key: string; value: number }>(READ, [tenantId]),
    )
  }

  /**
   * Merges the patch into the stored overrides and writes it, in one transaction that first locks the
   * tenant's row: `check` sees the merged result and may throw to refuse the whole change, so two
   * concurrent updates can never combine into an inconsistent configuration.
   */
  set(tenantId: string, patch: Overrides, check: (merged: Overrides) => void): Promise<Overrides> {
    const inv = this.inv
    return this.db.tx(function* () {
      yield* q.run('UPDATE tenants SET id = id WHERE id = ?', [tenantId])
      const current = toOverrides(
        yield* q.all<{ section: ConfigSection; key: string; value: number }>(READ, [tenantId]),
      )
      const merged: Overrides = {
        weights: { ...current.weights, ...patch.weights },
        thresholds: { ...current.thresholds, ...patch.thresholds },
      }
      check(merged)
      for (const section of ['weights', 'thresholds'] as const) {
        for (const [key, value] of Object.entries(patch[section])) {
          yield* q.run(
            `INSERT INTO tenant_config (tenant_id, section, key, value) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant_id, section, key) DO UPDATE SET value = excluded.value`,
            [tenantId, section, key, value],
          )
        }
      }
      yield* inv.touch(`config:${tenantId}`)
      return merged
    })
  }
}

const READ = 'SELECT section, key, value FROM tenant_config WHERE tenant_id = ?'

function toOverrides(rows: { section: ConfigSection; key: string; value: number }[]): Overrides {
  const out: Overrides = { weights: {}, thresholds: {} }
  for (const r of rows) out[r.section][r.key] = Number(r.value)
  return out
}
