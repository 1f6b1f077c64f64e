import type { Db, Sql } from './db.js'

export type ListName = 'allow' | 'block'
export type ListType = 'ip' | 'email' | 'device' | 'user'

export interface ListEntry {
  id: number
  list: ListName
  type: ListType
  /** Keyed hash for email and ip; the caller's own identifier for device and user. */
  valueKey: string
  /** Safe display form: masked for email and ip. */
  hint: string
  createdMs: number
}

export interface NewListEntry {
  list: ListName
  type: ListType
  valueKey: string
  hint: string
}

interface Row {
  id: number
  list: ListName
  type: ListType
  value_key: string
  hint: string
  created_ms: number
}

const toEntry = (r: Row): ListEntry => ({
  id: Number(r.id),
  list: r.list,
  type: r.type,
  valueKey: r.value_key,
  hint: r.hint,
  createdMs: Number(r.created_ms),
})

const COLS = 'id, list, type, value_key, hint, created_ms'

export class ListStore {
  constructor(private readonly db: Db) {}

  /** Adds an entry, or returns the existing identical one (adding is idempotent). */
  async add(tenantId: string, e: NewListEntry, nowMs: number, sql: Sql = this.db): Promise<ListEntry> {
    await sql.run(
      `INSERT INTO list_entries (tenant_id, list, type, value_key, hint, created_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, list, type, value_key) DO NOTHING`,
      [tenantId, e.list, e.type, e.valueKey, e.hint, nowMs],
    )
    const row = await sql.get<Row>(
      `SELECT ${COLS} FROM list_entries WHERE tenant_id = ? AND list = ? AND type = ? AND value_key = ?`,
      [tenantId, e.list, e.type, e.valueKey],
    )
    if (!row) throw new Error('list entry vanished after insert')
    return toEntry(row)
  }

  async addMany(tenantId: string, entries: readonly NewListEntry[], nowMs: number): Promise<ListEntry[]> {
    return this.db.tx(async (sql) => {
      const out: ListEntry[] = []
      for (const e of entries) out.push(await this.add(tenantId, e, nowMs, sql))
      return out
    })
  }

  async list(
    tenantId: string,
    limit: number,
    offset: number,
  ): Promise<{ entries: ListEntry[]; total: number }> {
    const rows = await this.db.all<Row>(
      `SELECT ${COLS} FROM list_entries WHERE tenant_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
      [tenantId, limit, offset],
    )
    const total = await this.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM list_entries WHERE tenant_id = ?',
      [tenantId],
    )
    return { entries: rows.map(toEntry), total: Number(total?.n ?? 0) }
  }

  async remove(tenantId: string, id: number): Promise<ListEntry | undefined> {
    const row = await this.db.get<Row>(`SELECT ${COLS} FROM list_entries WHERE tenant_id = ? AND id = ?`, [
      tenantId,
      id,
    ])
    if (!row) return undefined
    await this.db.run('DELETE FROM list_entries WHERE tenant_id = ? AND id = ?', [tenantId, id])
    return toEntry(row)
  }

  /** Entries of this tenant matching any of the given (type, key) pairs, in one query. */
  async match(tenantId: string, keys: readonly { type: ListType; valueKey: string }[]): Promise<ListEntry[]> {
    if (keys.length === 0) return []
    const cond = keys.map(() => '(type = ? AND value_key = ?)').join(' OR ')
    const params = keys.flatMap((k) => [k.type, k.valueKey])
    const rows = await this.db.all<Row>(
      `SELECT ${COLS} FROM list_entries WHERE tenant_id = ? AND (${cond})`,
      [tenantId, ...params],
    )
    return rows.map(toEntry)
  }
}
