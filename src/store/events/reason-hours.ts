import { q, type Work } from '../engine/db.js'
import { HOUR_MS } from './aggregates.js'

const DAY_MS = 24 * HOUR_MS
const texts = new Map<string, string>()

/**
 * How often one reason fired on a tenant's events, from the hourly statistics (`event_rollup`): in the
 * `hours` whole clock hours from `fromMs` on, and in the same clock hours of each of the `days` days
 * before (yesterday first). One range of the rollup's key (tenant, hour), so the cost is the tenant's
 * rollup rows of those days, whatever its event volume. Events of the group being written are not in it
 * yet (the group's counters are written at its end).
 */
export function* reasonHours(
  tenantId: string,
  reason: string,
  fromMs: number,
  hours: number,
  days: number,
): Work<{ recent: number; sameHours: number[] }> {
  const key = `${hours}:${days}`
  let sql = texts.get(key)
  if (!sql) {
    // Span d covers [from - d days, from - d days + hours): d = 0 is the recent one.
    const spans = Array.from(
      { length: days + 1 },
      (_, d) => `SUM(CASE WHEN hour_ms >= ? AND hour_ms < ? THEN n ELSE 0 END) AS s${d}`,
    )
    sql = `SELECT ${spans.join(', ')} FROM event_rollup WHERE tenant_id = ? AND reason = ? AND hour_ms >= ?`
    texts.set(key, sql)
  }
  const params: number[] = []
  for (let d = 0; d <= days; d++) params.push(fromMs - d * DAY_MS, fromMs - d * DAY_MS + hours * HOUR_MS)
  const r = yield* q.get<Record<string, number | string | null>>(sql, [
    ...params,
    tenantId,
    reason,
    fromMs - days * DAY_MS,
  ])
  const span = (d: number) => Number(r?.[`s${d}`] ?? 0)
  return { recent: span(0), sameHours: Array.from({ length: days }, (_, i) => span(i + 1)) }
}
