import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db, Param } from '../engine/db.js'
import {
  EVENT_COLUMNS,
  type EventFilter,
  type EventRecord,
  type EventRow,
  toEventRecord,
} from './event-row.js'

/** `total` counts at most this many events; beyond it the page says `totalCapped`. */
export const EVENTS_TOTAL_CAP = 10_000
/**
 * A filter no index serves (verdict, event, reason, q) reads at most this many of the newest events of
 * the range (time, user id, cursor): a rare reason code must not walk the tenant's whole history.
 */
export const EVENTS_SCAN_CAP = 2_500

export interface EventPage {
  events: EventRecord[]
  total: number
  /** More events may match than `total` says: the count stopped at the cap or the search at the scan cap. */
  totalCapped: boolean
  /** When the search stopped at the scan cap: the id of the oldest event it read (the next `before`). */
  searchedTo: string | null
}

const likeEscape = (s: string) => s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)
const ORDER = 'ORDER BY created_ms DESC, id DESC'

/** The conditions an index serves: tenant and time (events_tenant_time), user id (events_user), the cursor. */
function rangeOf(tenantId: string, f: EventFilter) {
  const where = ['tenant_id = ?']
  const params: Param[] = [tenantId]
  if (f.sinceMs !== undefined) {
    where.push('created_ms >= ?')
    params.push(f.sinceMs)
  }
  if (f.untilMs !== undefined) {
    where.push('created_ms < ?')
    params.push(f.untilMs)
  }
  if (f.userId !== undefined) {
    where.push('user_id = ?')
    params.push(f.userId)
  }
  if (f.before) {
    // Keyset cursor: older than the given event, or as old with a smaller id (the listing's order).
    where.push('(created_ms < ? OR (created_ms = ? AND id < ?))')
    params.push(f.before.createdMs, f.before.createdMs, f.before.id)
  }
  return { where: where.join(' AND '), params }
}

/** The conditions read row by row: they apply only inside the scan window. */
function scannedOf(f: EventFilter) {
  const where: string[] = []
  const params: Param[] = []
  if (f.verdict) {
    where.push('verdict = ?')
    params.push(f.verdict)
  }
  if (f.event) {
    where.push('event = ?')
    params.push(f.event)
  }
  if (f.reason) {
    // Reasons are stored as a JSON array of codes; a quoted code matches one element exactly.
    where.push("reasons LIKE ? ESCAPE '\\'")
    params.push(`%"${likeEscape(f.reason)}"%`)
  }
  if (f.q) {
    where.push("(LOWER(user_id) LIKE ? ESCAPE '\\' OR LOWER(device_id) LIKE ? ESCAPE '\\')")
    const pattern = `%${likeEscape(f.q)}%`
    params.push(pattern, pattern)
  }
  return { where: where.join(' AND '), params }
}

/**
 * The part of the range the unindexed filters search: its newest EVENTS_SCAN_CAP events, as a time
 * bound (strictly after the time of the next one, so no millisecond is cut in two), and the cursor that
 * continues after it. Both reads walk the time index only.
 */
async function scanWindow(
  db: Db,
  range: { where: string; params: Param[] },
): Promise<{ where: string; params: Param[]; searchedTo: string | null }> {
  const next = await db.get<{ created_ms: number }>(
    `SELECT created_ms FROM events WHERE ${range.where} ORDER BY created_ms DESC LIMIT 1 OFFSET ${EVENTS_SCAN_CAP}`,
    range.params,
  )
  if (!next) return { where: range.where, params: range.params, searchedTo: null }
  const edgeMs = Number(next.created_ms)
  // Newer than the first event past the cap; when the whole cap shares that millisecond (one large
  // batch), that millisecond alone.
  const newer = await db.get<{ id: string }>(
    `SELECT id FROM events WHERE ${range.where} AND created_ms > ? ORDER BY created_ms ASC, id ASC LIMIT 1`,
    [...range.params, edgeMs],
  )
  if (newer)
    return {
      where: `${range.where} AND created_ms > ?`,
      params: [...range.params, edgeMs],
      searchedTo: newer.id,
    }
  const first = await db.get<{ id: string }>(
    `SELECT id FROM events WHERE ${range.where} AND created_ms = ? ORDER BY id ASC LIMIT 1`,
    [...range.params, edgeMs],
  )
  return {
    where: `${range.where} AND created_ms >= ?`,
    params: [...range.params, edgeMs],
    searchedTo: first?.id ?? null,
  }
}

/**
 * One page of a tenant's events, newest first, with a bounded count: a query reads at most
 * EVENTS_TOTAL_CAP + 1 index entries, offset + limit rows, or the EVENTS_SCAN_CAP rows of the window,
 * whatever the tenant has stored. On SQLite each read holds the event loop, so the page yields a turn
 * between them.
 */
export async function listEventPage(db: Db, tenantId: string, f: EventFilter): Promise<EventPage> {
  const range = rangeOf(tenantId, f)
  const scanned = scannedOf(f)
  const window = scanned.where ? await scanWindow(db, range) : { ...range, searchedTo: null }
  const where = scanned.where ? `${window.where} AND ${scanned.where}` : window.where
  const params = [...window.params, ...scanned.params]
  await nextTurn()
  const rows = await db.all<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where} ${ORDER} LIMIT ? OFFSET ?`,
    [...params, f.limit, f.offset],
  )
  await nextTurn()
  const n = await db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM events WHERE ${where} LIMIT ${EVENTS_TOTAL_CAP + 1}) AS c`,
    params,
  )
  const total = Number(n?.n ?? 0)
  return {
    events: rows.map(toEventRecord),
    total: Math.min(total, EVENTS_TOTAL_CAP),
    totalCapped: total > EVENTS_TOTAL_CAP || window.searchedTo !== null,
    searchedTo: window.searchedTo,
  }
}
