import { type Db, q } from '../engine/db.js'
import { Cached, globalScoped, type Invalidation } from '../engine/invalidation.js'
import { UNKEYED_TENANT_TABLES } from '../schema/tenant-keys.js'
import { tenantRowLock } from './tenant-hold.js'

export interface Tenant {
  id: string
  name: string
  shareNetwork: boolean
  rateLimit: number
  monthlyQuota: number
  createdMs: number
}

export interface ApiKeyRecord {
  id: string
  tenantId: string
  prefix: string
  createdMs: number
  revokedMs: number | null
  /** When it last authenticated a request (to the minute); null: never, or before this was recorded. */
  lastUsedMs?: number | null
  /** Set when it was revoked by a rotation: the key that replaced it. */
  replacedBy?: string | null
  /** 'publishable' keys (pk_…) work only on the beacon, only from `origins`. */
  kind?: KeyKind
  origins?: string[]
}

export type KeyKind = 'secret' | 'publishable'

interface TenantRow {
  id: string
  name: string
  share_network: number
  rate_limit: number
  monthly_quota: number
  created_ms: number
}

interface KeyRow {
  id: string
  tenant_id: string
  prefix: string
  created_ms: number
  revoked_ms: number | null
  kind: KeyKind
  origins: string | null
  last_used_ms: number | null
  replaced_by: string | null
}

const parseOrigins = (v: string | null): string[] => (v ? (JSON.parse(v) as string[]) : [])

const toTenant = (r: TenantRow): Tenant => ({
  id: r.id,
  name: r.name,
  shareNetwork: Number(r.share_network) === 1,
  rateLimit: Number(r.rate_limit),
  monthlyQuota: Number(r.monthly_quota),
  createdMs: Number(r.created_ms),
})

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  prefix: r.prefix,
  createdMs: Number(r.created_ms),
  revokedMs: r.revoked_ms === null ? null : Number(r.revoked_ms),
  kind: r.kind === 'publishable' ? 'publishable' : 'secret',
  origins: parseOrigins(r.origins),
  lastUsedMs: r.last_used_ms === null ? null : Number(r.last_used_ms),
  replacedBy: r.replaced_by,
})

const TENANT_COLS = 'id, name, share_network, rate_limit, monthly_quota, created_ms'

type KeyMatch = {
  keyId: string
  keyHash: string
  revokedMs: number | null
  tenant: Tenant
  kind: KeyKind
  /** Allowed page origins of a publishable key; empty for secret keys. */
  origins: string[]
}

export class TenantStore {
  /** Key hash → key and tenant; dropped by `keys` (revocation, tenant changes) and `*`. No negative entries. */
  private readonly keys: Cached<string, KeyMatch | undefined>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.keys = new Cached<string, KeyMatch | undefined>(inv, globalScoped('keys'))
  }

  async create(t: Tenant): Promise<void> {
    await this.db.run(`INSERT INTO tenants (${TENANT_COLS}) VALUES (?, ?, ?, ?, ?, ?)`, [
      t.id,
      t.name,
      t.shareNetwork ? 1 : 0,
      t.rateLimit,
      t.monthlyQuota,
      t.createdMs,
    ])
  }

  async get(id: string): Promise<Tenant | undefined> {
    const r = await this.db.get<TenantRow>(`SELECT ${TENANT_COLS} FROM tenants WHERE id = ?`, [id])
    return r ? toTenant(r) : undefined
  }

  async list(): Promise<Tenant[]> {
    return (await this.db.all<TenantRow>(`SELECT ${TENANT_COLS} FROM tenants ORDER BY created_ms, id`)).map(
      toTenant,
    )
  }

  async count(): Promise<number> {
    const r = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM tenants')
    return Number(r?.n ?? 0)
  }

  /**
   * Deletes the tenant and all of its data. The tenant row is locked first (PostgreSQL: it waits for
   * every scoring group holding it, see schema/tenant-keys.ts, and holds off later ones, which then find
   * the tenant gone); then the tables without a tenant foreign key are emptied of its rows, which now
   * include every committed group's; then the tenant row goes and every other table cascades from it.
   */
  delete(id: string): Promise<boolean> {
    const inv = this.inv
    const lock = tenantRowLock(this.db.dialect, 'UPDATE')
    return this.db.tx(function* () {
      if (!(yield* q.get(`SELECT id FROM tenants WHERE id = ?${lock}`, [id]))) return false
      for (const table of UNKEYED_TENANT_TABLES)
        yield* q.run(`DELETE FROM ${table} WHERE tenant_id = ?`, [id])
      const n = yield* q.run('DELETE FROM tenants WHERE id = ?', [id])
      yield* inv.touch('*')
      return n > 0
    })
  }

  async addKey(key: ApiKeyRecord, keyHash: string): Promise<void> {
    await this.db.run(
      'INSERT INTO api_keys (id, tenant_id, key_hash, prefix, created_ms, kind, origins) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [
        key.id,
        key.tenantId,
        keyHash,
        key.prefix,
        key.createdMs,
        key.kind ?? 'secret',
        key.origins?.length ? JSON.stringify(key.origins) : null,
      ],
    )
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.get<KeyRow>(
      'SELECT id, tenant_id, prefix, created_ms, revoked_ms, kind, origins, last_used_ms, replaced_by FROM api_keys WHERE id = ?',
      [id],
    )
    return r ? toKey(r) : undefined
  }

  async listKeys(tenantId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.all<KeyRow>(
      'SELECT id, tenant_id, prefix, created_ms, revoked_ms, kind, origins, last_used_ms, replaced_by FROM api_keys WHERE tenant_id = ? ORDER BY created_ms, id',
      [tenantId],
    )
    return rows.map(toKey)
  }

  /** Records that a key authenticated a request (informational: no cache depends on it). */
  async touchKey(id: string, nowMs: number): Promise<void> {
    await this.db.run('UPDATE api_keys SET last_used_ms = ? WHERE id = ?', [nowMs, id])
  }

  async findByName(name: string): Promise<Tenant[]> {
    return (
      await this.db.all<TenantRow>(
        `SELECT ${TENANT_COLS} FROM tenants WHERE name = ? ORDER BY created_ms, id`,
        [name],
      )
    ).map(toTenant)
  }

  revokeKey(id: string, nowMs: number, replacedBy: string | null = null): Promise<boolean> {
    const inv = this.inv
    return this.db.tx(function* () {
      const n = yield* q.run(
        'UPDATE api_keys SET revoked_ms = ?, replaced_by = ? WHERE id = ? AND revoked_ms IS NULL',
        [nowMs, replacedBy, id],
      )
      yield* inv.touch('keys')
      return n > 0
    })
  }

  /** Finds the active key with this hash together with its tenant. */
  findByKeyHash(keyHash: string): Promise<KeyMatch | undefined> {
    // Unknown keys are not kept: guessing must not fill memory.
    return this.keys.get(keyHash, () => this.readKey(keyHash))
  }

  private async readKey(keyHash: string): Promise<KeyMatch | undefined> {
    const r = await this.db.get<
      TenantRow & {
        key_id: string
        key_hash: string
        revoked_ms: number | null
        kind: KeyKind
        origins: string | null
      }
    >(
      // Kind and origins come with the same row: publishable keys cost no extra query.
      `SELECT k.id AS key_id, k.key_hash, k.revoked_ms, k.kind, k.origins, t.id, t.name, t.share_network, t.rate_limit,
              t.monthly_quota, t.created_ms
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_hash = ?`,
      [keyHash],
    )
    if (!r) return undefined
    return {
      keyId: r.key_id,
      keyHash: r.key_hash,
      revokedMs: r.revoked_ms === null ? null : Number(r.revoked_ms),
      tenant: toTenant(r),
      kind: r.kind === 'publishable' ? 'publishable' : 'secret',
      origins: parseOrigins(r.origins),
    }
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [key]))?.value
  }
}
