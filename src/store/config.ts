import type { Db } from './db.js'

export type ConfigSection = 'weights' | 'thresholds'
export type Overrides = Record<ConfigSection, Record<string, number>>

export class ConfigStore {
  constructor(private readonly db: Db) {}

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
  }
}
