import { q, type Work } from '../engine/db.js'
import { DAY_MS, HOUR_MS } from './aggregates.js'

const texts = new Map<number, string>()

/** A span of hours: the events that fired the reason, and all the tenant's events. */
export interface ReasonSpan {
  fired: number
  events: number
}

/**
 * How often one reason fired on a tenant's events, and how many events there were, from the hourly
 * statistics (`event_rollup`, whose '' rows count every event): in the `hours` whole clock hours from
 * `fromMs` on, and in the same clock hours of each of the `days` days before (yesterday first). Each
 * hour is read by its whole key, one probe per hour, verdict and reason, so the cost does not depend on
 * how many other reasons or events the tenant has. Events of the group being written are not in it yet
 * (the group's counters are written at its end).
 */
export function* reasonHours(
  tenantId: string,
  reason: string,
  fromMs: number,
  hours: number,
  days: number,
): Work<{ recent: ReasonSpan; sameHours: ReasonSpan[] }> {
  const starts: number[] = []
  for (let d = 0; d <= days; d++)
    for (let h = 0; h < hours; h++) starts.push(fromMs - d * DAY_MS + h * HOUR_MS)
  let sql = texts.get(starts.length)
  if (!sql) {
    sql = `SELECT hour_ms, reason, SUM(n) AS n FROM event_rollup
      WHERE tenant_id = ? AND hour_ms IN (${starts.map(() => '?').join(', ')})
        AND verdict IN ('allow', 'review', 'block') AND reason IN ('', ?) GROUP BY hour_ms, reason`
    texts.set(starts.length, sql)
  }
  const rows = yield* q.all<{ hour_ms: number | string; reason: string; n: number | string }>(sql, [
    tenantId,
    ...starts,
    reason,
  ])
  const spans = Array.from({ length: days + 1 }, () => ({ fired: 0, events: 0 }))
  for (const r of rows) {
    // Span d holds the hours [from - d days, from - d days + hours).
    const span = spans[Math.max(0, Math.ceil((fromMs - Number(r.hour_ms)) / DAY_MS))]
    if (!span) continue
    if (r.reason === '') span.events += Number(r.n)
    else span.fired += Number(r.n)
  }
  return { recent: spans[0]!, sameHours: spans.slice(1) }
}
