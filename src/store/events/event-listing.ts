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
export const EVENTS_SCAN_CAP = 20_000

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
 * One page of a tenant's events, newest first, with a bounded count: every query reads at most
 * EVENTS_SCAN_CAP + offset + limit rows of one index range, whatever the tenant has stored.
 */
export async function listEventPage(db: Db, tenantId: string, f: EventFilter): Promise<EventPage> {
  const range = rangeOf(tenantId, f)
  const scanned = scannedOf(f)
  if (!scanned.where) {
    const rows = await db.all<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE ${range.where} ${ORDER} LIMIT ? OFFSET ?`,
      [...range.params, f.limit, f.offset],
    )
    const n = await db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM events WHERE ${range.where} LIMIT ${EVENTS_TOTAL_CAP + 1}) AS c`,
      range.params,
    )
    const total = Number(n?.n ?? 0)
    return {
      events: rows.map(toEventRecord),
      total: Math.min(total, EVENTS_TOTAL_CAP),
      totalCapped: total > EVENTS_TOTAL_CAP,
      searchedTo: null,
    }
  }
  const window = `SELECT ${EVENT_COLUMNS} FROM events WHERE ${range.where} ${ORDER} LIMIT ${EVENTS_SCAN_CAP}`
  const rows = await db.all<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM (${window}) AS recent WHERE ${scanned.where} ${ORDER} LIMIT ? OFFSET ?`,
    [...range.params, ...scanned.params, f.limit, f.offset],
  )
  const narrow = `SELECT verdict, event, reasons, user_id, device_id FROM events WHERE ${range.where} ${ORDER} LIMIT ${EVENTS_SCAN_CAP}`
  const n = await db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM (${narrow}) AS recent WHERE ${scanned.where}
      LIMIT ${EVENTS_TOTAL_CAP + 1}) AS c`,
    [...range.params, ...scanned.params],
  )
  // The window's last row and the one after it: two rows mean the range holds more than the window.
  const edge = await db.all<{ id: string }>(
    `SELECT id FROM events WHERE ${range.where} ${ORDER} LIMIT 2 OFFSET ${EVENTS_SCAN_CAP - 1}`,
    range.params,
  )
  const total = Number(n?.n ?? 0)
  const searchedTo = edge.length === 2 ? (edge[0]?.id ?? null) : null
  return {
    events: rows.map(toEventRecord),
    total: Math.min(total, EVENTS_TOTAL_CAP),
    totalCapped: total > EVENTS_TOTAL_CAP || searchedTo !== null,
    searchedTo,
  }
}
