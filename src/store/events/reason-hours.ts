import { q, type Work } from '../engine/db.js'
import { HOUR_MS } from './aggregates.js'

const DAY_MS = 24 * HOUR_MS
const texts = new Map<number, string>()

/**
 * How often one reason fired on a tenant's events, from the hourly statistics (`event_rollup`): in the
 * `hours` whole clock hours from `fromMs` on, and in the same clock hours of each of the `days` days
 * before (yesterday first). Each hour is read by its whole key, one probe per hour and verdict, so the
 * cost does not depend on how many other reasons or events the tenant has. Events of the group being
 * written are not in it yet (the group's counters are written at its end).
 */
export function* reasonHours(
  tenantId: string,
  reason: string,
  fromMs: number,
  hours: number,
  days: number,
): Work<{ recent: number; sameHours: number[] }> {
  const starts: number[] = []
  for (let d = 0; d <= days; d++)
    for (let h = 0; h < hours; h++) starts.push(fromMs - d * DAY_MS + h * HOUR_MS)
  let sql = texts.get(starts.length)
  if (!sql) {
    sql = `SELECT hour_ms, SUM(n) AS n FROM event_rollup
      WHERE tenant_id = ? AND hour_ms IN (${starts.map(() => '?').join(', ')})
        AND verdict IN ('allow', 'review', 'block') AND reason = ? GROUP BY hour_ms`
    texts.set(starts.length, sql)
  }
  const rows = yield* q.all<{ hour_ms: number | string; n: number | string }>(sql, [
    tenantId,
    ...starts,
    reason,
  ])
  const spans = new Array<number>(days + 1).fill(0)
  for (const r of rows) {
    // Span d holds the hours [from - d days, from - d days + hours).
    const d = Math.ceil((fromMs - Number(r.hour_ms)) / DAY_MS)
    if (d >= 0 && d <= days) spans[d]! += Number(r.n)
  }
  return { recent: spans[0]!, sameHours: spans.slice(1) }
}
