import type { ListEntryType } from '../../util/entities.js'
import { type Db, q, type Work } from '../engine/db.js'
import { Cached, type Invalidation, tenantScoped } from '../engine/invalidation.js'

/** `allow` and `block` decide (built-in list checks); any other name is a named list rules test. */
export type ListName = string

/** An IP range entry's version and prefix length (its network is in the keyed hash). */
export interface IpRange {
  version: 4 | 6
  len: number
}

/** What a value is listed and matched under: its kind and stored key (a keyed hash for email and ip). */
export interface ListKey {
  type: ListEntryType
  valueKey: string
}

export interface ListEntry {
  id: number
  list: ListName
  type: ListEntryType
  /** Keyed hash for email and ip; the caller's own identifier for device and user. */
  valueKey: string
  /** Safe display form: masked for email and ip. */
  hint: string
  createdMs: number
  /** When the entry stops matching (ms); null: never. */
  expiresMs: number | null
  /** The operator's note; null when none. */
  note: string | null
  /** Set for a CIDR range (type ip): `valueKey` then hashes the network and length. */
  range: IpRange | null
}

export interface NewListEntry {
  list: ListName
  type: ListEntryType
  valueKey: string
  hint: string
  expiresMs?: number | null
  note?: string | null
  range?: IpRange | null
}

interface Row {
  id: number
  list: ListName
  type: ListEntryType
  value_key: string
  hint: string
  created_ms: number
  expires_ms: number | null
  note: string | null
  ip_version: number | null
  prefix_len: number | null
}

const toEntry = (r: Row): ListEntry => ({
  id: Number(r.id),
  list: r.list,
  type: r.type,
  valueKey: r.value_key,
  hint: r.hint,
  createdMs: Number(r.created_ms),
  expiresMs: r.expires_ms === null ? null : Number(r.expires_ms),
  note: r.note,
  range:
    r.ip_version === null || r.prefix_len === null
      ? null
      : { version: Number(r.ip_version) === 6 ? 6 : 4, len: Number(r.prefix_len) },
})

/** Whether an entry still matches at `nowMs`: an expired one stops at once, before the job purges it. */
export const live = (e: ListEntry, nowMs: number) => e.expiresMs === null || e.expiresMs > nowMs

/** Work a change of the list does in its own transaction. */
export type ListHook = (entry: ListEntry) => Work<unknown>

const COLS = 'id, list, type, value_key, hint, created_ms, expires_ms, note, ip_version, prefix_len'

/**
 * A tenant's whole list, indexed by (type, key): scoring matches in memory. `lengths` holds the prefix
 * lengths its ranges use per IP version: a scored address is looked up once per length.
 */
interface ListIndex {
  byKey: Map<string, ListEntry[]>
  lengths: Map<4 | 6, number[]>
}

/** The keys of an event's IP under each range length the tenant uses (services hash them). */
export type RangeKeys = (lengths: ReadonlyMap<4 | 6, readonly number[]>) => ListKey[]

export interface ListFilter {
  list?: string
  type?: string
  /** `active`: still matching at `nowMs`; `expired`: past its expiry, not purged yet. */
  status?: 'active' | 'expired'
  nowMs: number
}
const indexKey = (type: string, valueKey: string) => `${type}\u0000${valueKey}`

export class ListStore {
  private readonly cache: Cached<string, ListIndex>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.cache = new Cached(inv, tenantScoped('lists'), 1000)
  }

  /**
   * Adds an entry, or returns the existing identical one (adding is idempotent). `onAdded` runs in the
   * same transaction for an entry this call created (the webhook outbox).
   */
  *add(tenantId: string, e: NewListEntry, nowMs: number, onAdded?: ListHook): Work<ListEntry> {
    const created = yield* q.run(
      `INSERT INTO list_entries
         (tenant_id, list, type, value_key, hint, created_ms, expires_ms, note, ip_version, prefix_len)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, list, type, value_key) DO NOTHING`,
      [
        tenantId,
        e.list,
        e.type,
        e.valueKey,
        e.hint,
        nowMs,
        e.expiresMs ?? null,
        e.note ?? null,
        e.range?.version ?? null,
        e.range?.len ?? null,
      ],
    )
    const row = yield* q.get<Row>(
      `SELECT ${COLS} FROM list_entries WHERE tenant_id = ? AND list = ? AND type = ? AND value_key = ?`,
      [tenantId, e.list, e.type, e.valueKey],
    )
    if (!row) throw new Error('list entry vanished after insert')
    yield* this.inv.touch(`lists:${tenantId}`)
    const entry = toEntry(row)
    if (created > 0 && onAdded) yield* onAdded(entry)
    return entry
  }

  addMany(
    tenantId: string,
    entries: readonly NewListEntry[],
    nowMs: number,
    onAdded?: ListHook,
  ): Promise<ListEntry[]> {
    const add = this.add.bind(this)
    return this.db.tx(function* () {
      const out: ListEntry[] = []
      for (const e of entries) out.push(yield* add(tenantId, e, nowMs, onAdded))
      return out
    })
  }

  /** A page of entries, newest first, and how many match the filter in all. */
  async list(
    tenantId: string,
    limit: number,
    offset: number,
    filter: ListFilter = { nowMs: 0 },
  ): Promise<{ entries: ListEntry[]; total: number }> {
    const where = ['tenant_id = ?']
    const params: (string | number)[] = [tenantId]
    if (filter.list !== undefined) {
      where.push('list = ?')
      params.push(filter.list)
    }
    if (filter.type !== undefined) {
      where.push('type = ?')
      params.push(filter.type)
    }
    if (filter.status === 'active') {
      where.push('(expires_ms IS NULL OR expires_ms > ?)')
      params.push(filter.nowMs)
    } else if (filter.status === 'expired') {
      where.push('expires_ms <= ?')
      params.push(filter.nowMs)
    }
    const w = where.join(' AND ')
    const rows = await this.db.all<Row>(
      `SELECT ${COLS} FROM list_entries WHERE ${w} ORDER BY id DESC LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    )
    const total = await this.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM list_entries WHERE ${w}`,
      params,
    )
    return { entries: rows.map(toEntry), total: Number(total?.n ?? 0) }
  }

  /** Removes an entry; `onRemoved` runs in the same transaction (the webhook outbox). */
  async remove(tenantId: string, id: number, onRemoved?: ListHook): Promise<ListEntry | undefined> {
    const inv = this.inv
    return this.db.tx(function* () {
      const row = yield* q.get<Row>(`SELECT ${COLS} FROM list_entries WHERE tenant_id = ? AND id = ?`, [
        tenantId,
        id,
      ])
      if (!row) return undefined
      yield* q.run('DELETE FROM list_entries WHERE tenant_id = ? AND id = ?', [tenantId, id])
      yield* inv.touch(`lists:${tenantId}`)
      const entry = toEntry(row)
      if (onRemoved) yield* onRemoved(entry)
      return entry
    })
  }

  /**
   * Entries of this tenant matching any of the given (type, key) pairs at `nowMs`, from the tenant's
   * cached index; entries past their expiry never match, whether or not the purge job ran yet.
   */
  async match(
    tenantId: string,
    keys: readonly ListKey[],
    nowMs: number,
    rangeKeys?: RangeKeys,
  ): Promise<ListEntry[]> {
    if (keys.length === 0 && !rangeKeys) return []
    const index = await this.cache.get(tenantId, () => this.load(tenantId))
    const all = rangeKeys && index.lengths.size > 0 ? [...keys, ...rangeKeys(index.lengths)] : keys
    const out: ListEntry[] = []
    for (const k of all) {
      const hit = index.byKey.get(indexKey(k.type, k.valueKey))
      if (hit) for (const e of hit) if (live(e, nowMs)) out.push(e)
    }
    return out
  }

  /**
   * Deletes up to `limit` entries (of every tenant) whose expiry has passed, oldest expiry first, in one
   * transaction; `onExpired` runs in it for each (the webhook outbox). Returns how many went.
   */
  expire(
    nowMs: number,
    onExpired: (tenantId: string, e: ListEntry) => Work<unknown>,
    limit = 500,
  ): Promise<number> {
    const inv = this.inv
    return this.db.tx(function* () {
      const rows = yield* q.all<Row & { tenant_id: string }>(
        `SELECT tenant_id, ${COLS} FROM list_entries
          WHERE expires_ms IS NOT NULL AND expires_ms <= ? ORDER BY expires_ms LIMIT ?`,
        [nowMs, limit],
      )
      const tenants = new Set<string>()
      for (const r of rows) {
        yield* q.run('DELETE FROM list_entries WHERE tenant_id = ? AND id = ?', [r.tenant_id, r.id])
        yield* onExpired(r.tenant_id, toEntry(r))
        tenants.add(r.tenant_id)
      }
      for (const t of tenants) yield* inv.touch(`lists:${t}`)
      return rows.length
    })
  }

  private async load(tenantId: string): Promise<ListIndex> {
    const rows = await this.db.all<Row>(`SELECT ${COLS} FROM list_entries WHERE tenant_id = ?`, [tenantId])
    const index: ListIndex = { byKey: new Map(), lengths: new Map() }
    for (const r of rows) {
      const e = toEntry(r)
      const k = indexKey(e.type, e.valueKey)
      const at = index.byKey.get(k)
      if (at) at.push(e)
      else index.byKey.set(k, [e])
      if (e.range) {
        const lens = index.lengths.get(e.range.version) ?? []
        if (!lens.includes(e.range.len)) lens.push(e.range.len)
        index.lengths.set(e.range.version, lens)
      }
    }
    return index
  }
}
