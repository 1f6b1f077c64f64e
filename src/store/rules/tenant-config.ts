import type { AttributeSpecs, RuleSpec } from '../../scoring/rules/types.js'
import { type Db, q, type Work } from '../engine/db.js'
import { Cached, type Invalidation, tenantScoped } from '../engine/invalidation.js'

export type ConfigSection = 'weights' | 'thresholds'
export type Overrides = Record<ConfigSection, Record<string, number>> & {
  /** The tenant's own rules (docs/rules.md); absent or empty when it has none. */
  rules?: RuleSpec[]
  /** The tenant's hashed and counted attributes (docs/rules.md); absent when it declares none. */
  attributes?: AttributeSpecs
}

/** A change of the overrides: a key set to null drops its override (back to the default). */
export type OverridesPatch = Record<ConfigSection, Record<string, number | null>> & {
  rules?: RuleSpec[]
  attributes?: AttributeSpecs
}

/** `base` with `patch` applied: null removes a key, a number sets it. */
export function patched(base: Record<string, number>, patch: Record<string, number | null> | undefined) {
  const out = { ...base }
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[k]
    else out[k] = v
  }
  return out
}

/**
 * A tenant's overrides and the number of the config version they make. Version 0 is the configuration
 * a tenant starts with; it is stored (with the time the tenant was created) by the first change.
 */
export interface StoredConfig {
  overrides: Overrides
  version: number
}

export interface ConfigVersionRow {
  version: number
  createdMs: number
  /** The full effective configuration of the version, as JSON. */
  config: string
}

/** Both read in one statement, so the overrides and their version number always belong together. */
const READ = `SELECT 'version' AS section, '' AS key, COALESCE(MAX(version), 0) AS value, NULL AS text
                FROM config_versions WHERE tenant_id = ?
              UNION ALL
              SELECT section, key, value, NULL FROM tenant_config WHERE tenant_id = ?
              UNION ALL
              SELECT 'rules', '', 0, rules FROM tenant_rules WHERE tenant_id = ?
              UNION ALL
              SELECT 'attributes', '', 0, attributes FROM tenant_rules WHERE tenant_id = ? AND attributes IS NOT NULL`
const readParams = (tenantId: string) => [tenantId, tenantId, tenantId, tenantId]

type Row = {
  section: ConfigSection | 'version' | 'rules' | 'attributes'
  key: string
  value: number
  text: string | null
}

function toStored(rows: Row[]): StoredConfig {
  const out: StoredConfig = { overrides: { weights: {}, thresholds: {} }, version: 0 }
  for (const r of rows) {
    if (r.section === 'version') out.version = Number(r.value)
    else if (r.section === 'rules') {
      const rules = JSON.parse(r.text ?? '[]') as RuleSpec[]
      if (rules.length > 0) out.overrides.rules = rules
    } else if (r.section === 'attributes') {
      const attributes = JSON.parse(r.text ?? '{}') as AttributeSpecs
      if (Object.keys(attributes).length > 0) out.overrides.attributes = attributes
    } else out.overrides[r.section][r.key] = Number(r.value)
  }
  return out
}

export class ConfigStore {
  private readonly cache: Cached<string, StoredConfig>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.cache = new Cached(inv, tenantScoped('config'))
  }

  /** The tenant's config from memory; every write (here or in another process) drops the copy. */
  cached(tenantId: string): Promise<StoredConfig> {
    return this.cache.get(tenantId, () => this.current(tenantId))
  }

  async current(tenantId: string): Promise<StoredConfig> {
    return toStored(await this.db.all<Row>(READ, readParams(tenantId)))
  }

  /**
   * Merges the patch into the stored overrides in one transaction that first locks the tenant's row:
   * `check` sees the merged result and may throw to refuse the whole change, so two concurrent updates
   * can never combine into an inconsistent configuration. A change of the effective configuration
   * (`effective` renders it) records a new version; a patch that changes nothing records none.
   * `onVersion` runs in the same transaction for a new version (the webhook outbox).
   */
  set(
    tenantId: string,
    patch: OverridesPatch,
    check: (merged: Overrides) => void,
    effective: (o: Overrides) => string,
    now: number,
    onVersion?: (version: number) => Work<unknown>,
  ): Promise<StoredConfig> {
    const inv = this.inv
    return this.db.tx(function* () {
      const tenant = yield* q.get<{ created_ms: number }>(
        'UPDATE tenants SET id = id WHERE id = ? RETURNING created_ms',
        [tenantId],
      )
      const current = toStored(yield* q.all<Row>(READ, readParams(tenantId)))
      const merged: Overrides = {
        weights: patched(current.overrides.weights, patch.weights),
        thresholds: patched(current.overrides.thresholds, patch.thresholds),
      }
      // Rules are replaced as a whole list when sent, attribute declarations as a whole map.
      const rules = patch.rules ?? current.overrides.rules
      if (rules && rules.length > 0) merged.rules = rules
      const attributes = patch.attributes ?? current.overrides.attributes
      if (attributes && Object.keys(attributes).length > 0) merged.attributes = attributes
      check(merged)
      const before = effective(current.overrides)
      const after = effective(merged)
      if (after === before) return current
      const insert =
        'INSERT INTO config_versions (tenant_id, version, created_ms, config) VALUES (?, ?, ?, ?)'
      // Version 0 is stored together with version 1: while the tenant is on 0, it is not stored yet.
      if (current.version === 0)
        yield* q.run(insert, [tenantId, 0, Number(tenant?.created_ms ?? now), before])
      const version = current.version + 1
      yield* q.run(insert, [tenantId, version, now, after])
      for (const section of ['weights', 'thresholds'] as const) {
        for (const [key, value] of Object.entries(patch[section])) {
          if (value === null) {
            yield* q.run('DELETE FROM tenant_config WHERE tenant_id = ? AND section = ? AND key = ?', [
              tenantId,
              section,
              key,
            ])
            continue
          }
          yield* q.run(
            `INSERT INTO tenant_config (tenant_id, section, key, value) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant_id, section, key) DO UPDATE SET value = excluded.value`,
            [tenantId, section, key, value],
          )
        }
      }
      if (patch.rules !== undefined) {
        yield* q.run(
          `INSERT INTO tenant_rules (tenant_id, rules) VALUES (?, ?)
           ON CONFLICT (tenant_id) DO UPDATE SET rules = excluded.rules`,
          [tenantId, JSON.stringify(patch.rules)],
        )
      }
      if (patch.attributes !== undefined) {
        yield* q.run(
          `INSERT INTO tenant_rules (tenant_id, rules, attributes) VALUES (?, '[]', ?)
           ON CONFLICT (tenant_id) DO UPDATE SET attributes = excluded.attributes`,
          [tenantId, JSON.stringify(patch.attributes)],
        )
      }
      yield* inv.touch(`config:${tenantId}`)
      if (onVersion) yield* onVersion(version)
      return { overrides: merged, version }
    })
  }

  /** Stored versions, newest first. */
  async versions(tenantId: string, limit: number, offset: number): Promise<ConfigVersionRow[]> {
    const rows = await this.db.all<{ version: number; created_ms: number; config: string }>(
      `SELECT version, created_ms, config FROM config_versions WHERE tenant_id = ?
        ORDER BY version DESC LIMIT ? OFFSET ?`,
      [tenantId, limit, offset],
    )
    return rows.map((r) => ({
      version: Number(r.version),
      createdMs: Number(r.created_ms),
      config: r.config,
    }))
  }

  /** One stored version's effective configuration as JSON, or null when it is not stored. */
  async versionConfig(tenantId: string, version: number): Promise<string | null> {
    const r = await this.db.get<{ config: string }>(
      'SELECT config FROM config_versions WHERE tenant_id = ? AND version = ?',
      [tenantId, version],
    )
    return r?.config ?? null
  }
}
