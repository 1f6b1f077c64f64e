import type { Db } from '../engine/db.js'
import type { SuppressionAction } from './privacy.js'

/** One row of the suppression audit, with its tenant: what a restore carries into the restored data. */
export interface AuditRow {
  tenantId: string
  action: SuppressionAction
  entityType: string
  valueHash: string
  eventId: string | null
  createdMs: number
}

/** Every identifier the tenant's rows hold, per kind, in their stored form. */
export interface StoredIdentifiers {
  email: string[]
  ip: string[]
  phone: string[]
  device: string[]
  user: string[]
}

/** Where each kind of identifier is stored: table, column, and the condition that row holds that kind. */
const SOURCES: Record<keyof StoredIdentifiers, [table: string, column: string, where?: string][]> = {
  email: [
    ['events', 'email_hash'],
    ['labels', 'email_hash'],
    ['lookups', 'value_hash', "kind = 'email'"],
    ['list_entries', 'value_key', "type = 'email'"],
    ['webhook_messages', 'email_hash'],
  ],
  ip: [
    ['events', 'ip_hash'],
    ['labels', 'ip_hash'],
    ['device_observations', 'ip_hash'],
    ['beacon_observations', 'ip_hash'],
    ['ip_accounts', 'ip_hash'],
    ['lookups', 'value_hash', "kind = 'ip'"],
    ['list_entries', 'value_key', "type = 'ip'"],
    ['webhook_messages', 'ip_hash'],
  ],
  phone: [
    ['events', 'phone_hash'],
    ['lookups', 'value_hash', "kind = 'phone'"],
    ['list_entries', 'value_key', "type = 'phone'"],
    ['webhook_messages', 'phone_hash'],
  ],
  device: [
    ['events', 'device_id'],
    ['labels', 'device_id'],
    ['device_observations', 'device_id'],
    ['beacon_observations', 'device_id'],
    ['list_entries', 'value_key', "type = 'device'"],
    ['webhook_messages', 'device_id'],
  ],
  user: [
    ['events', 'user_id'],
    ['labels', 'user_id'],
    ['device_observations', 'user_id'],
    ['ip_accounts', 'user_id'],
    ['list_entries', 'value_key', "type = 'user'"],
    ['webhook_messages', 'user_id'],
  ],
}

export class RestoreStore {
  constructor(private readonly db: Db) {}

  /** The whole audit, every tenant: read from the database a restore is about to replace. */
  async audit(): Promise<AuditRow[]> {
    const rows = await this.db.all<{
      tenant_id: string
      action: SuppressionAction
      entity_type: string
      value_hash: string
      event_id: string | null
      created_ms: number
    }>(
      'SELECT tenant_id, action, entity_type, value_hash, event_id, created_ms FROM suppressions ORDER BY id',
    )
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      action: r.action,
      entityType: r.entity_type,
      valueHash: r.value_hash,
      eventId: r.event_id,
      createdMs: Number(r.created_ms),
    }))
  }

  /** The tenants the restored data holds (an audit row of a tenant it lacks has nothing to act on). */
  async tenantIds(): Promise<Set<string>> {
    return new Set((await this.db.all<{ id: string }>('SELECT id FROM tenants')).map((r) => r.id))
  }

  /** Adds the audit rows the restored data lacks; returns how many were added. */
  async carry(rows: readonly AuditRow[]): Promise<number> {
    let added = 0
    for (const r of rows) {
      added += await this.db.run(
        `INSERT INTO suppressions (tenant_id, action, entity_type, value_hash, event_id, created_ms)
         SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (
           SELECT 1 FROM suppressions WHERE tenant_id = ? AND action = ? AND value_hash = ? AND created_ms = ?)`,
        [
          r.tenantId,
          r.action,
          r.entityType,
          r.valueHash,
          r.eventId,
          r.createdMs,
          r.tenantId,
          r.action,
          r.valueHash,
          r.createdMs,
        ],
      )
    }
    return added
  }

  async identifiers(tenantId: string): Promise<StoredIdentifiers> {
    const out = { email: [], ip: [], phone: [], device: [], user: [] } as StoredIdentifiers
    for (const kind of Object.keys(SOURCES) as (keyof StoredIdentifiers)[]) {
      const parts = SOURCES[kind].map(
        ([table, col, where]) =>
          `SELECT ${col} AS v FROM ${table} WHERE tenant_id = ? AND ${col} IS NOT NULL${where ? ` AND ${where}` : ''}`,
      )
      const rows = await this.db.all<{ v: string }>(
        parts.join(' UNION '),
        SOURCES[kind].map(() => tenantId),
      )
      out[kind] = rows.map((r) => r.v)
    }
    return out
  }
}
