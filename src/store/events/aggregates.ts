import { type Param, q, together, type Work } from '../engine/db.js'
import type { ScoredEvent } from './scored-event.js'

export const HOUR_MS = 3600_000
export const DAY_MS = 86_400_000

interface Rollup {
  tenantId: string
  hourMs: number
  verdict: string
  reason: string
  n: number
  scoreSum: number
}

interface AsnDay {
  dayMs: number
  asn: number
  tenantId: string
  events: number
  bad: number
}

/** Rows per multi-row upsert: the group's counters go out in a few statements, not one per row. */
const CHUNK = 100

const upsert = (head: string, cols: number, conflict: string) => {
  const texts = new Map<number, string>()
  return (rows: number): string => {
    let t = texts.get(rows)
    if (!t) {
      const one = `(${Array(cols).fill('?').join(', ')})`
      t = `${head} VALUES ${Array(rows).fill(one).join(', ')} ${conflict}`
      texts.set(rows, t)
    }
    return t
  }
}

const rollupSql = upsert(
  'INSERT INTO event_rollup (tenant_id, hour_ms, verdict, reason, n, score_sum)',
  6,
  `ON CONFLICT (tenant_id, hour_ms, verdict, reason) DO UPDATE SET n = event_rollup.n + excluded.n,
    score_sum = event_rollup.score_sum + excluded.score_sum`,
)

const asnSql = upsert(
  'INSERT INTO asn_daily (day_ms, asn, tenant_id, events, bad)',
  5,
  `ON CONFLICT (day_ms, asn, tenant_id) DO UPDATE SET events = asn_daily.events + excluded.events,
    bad = asn_daily.bad + excluded.bad`,
)

const ASN_UPSERT = asnSql(1)

/** Writes rows in multi-row statements of at most CHUNK rows (each key appears once per statement). */
function* upsertAll<R>(
  rows: readonly R[],
  sql: (n: number) => string,
  params: (r: R) => Param[],
): Work<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const part = rows.slice(i, i + CHUNK)
    yield* q.run(sql(part.length), part.flatMap(params))
  }
}

const sortedValues = <V>(m: ReadonlyMap<string, V>): V[] => [...m.keys()].sort().map((k) => m.get(k)!)

/** Adds a bad event to an ASN's day (a `fraud`/`chargeback` label on an event that did not count as bad). */
export function* addAsnBad(tenantId: string, asn: number, createdMs: number): Work<void> {
  const day = Math.floor(createdMs / DAY_MS) * DAY_MS
  yield* q.run(ASN_UPSERT, [day, asn, tenantId, 0, 1] as Param[])
}

/**
 * The counters a group commit adds up in memory and writes once at its end: per tenant, hour, verdict
 * and reason (statistics) and per day, ASN and tenant (ASN fraud rates). A group of 200 events writes a
 * few dozen counter rows instead of a thousand reason rows.
 */
export class GroupCounters {
  private readonly rollups = new Map<string, Rollup>()
  private readonly asnDays = new Map<string, AsnDay>()

  /**
   * The group's own events so far, of a tenant in the hours from `fromMs` up to `toMs`: how many, and
   * how many fired `reason` (what the statistics will hold once the group has written them).
   */
  pending(tenantId: string, reason: string, fromMs: number, toMs: number): { events: number; fired: number } {
    let events = 0
    let fired = 0
    for (const r of this.rollups.values()) {
      if (r.tenantId !== tenantId || r.hourMs < fromMs || r.hourMs >= toMs) continue
      if (r.reason === '') events += r.n
      else if (r.reason === reason) fired += r.n
    }
    return { events, fired }
  }

  /** What one recorded event adds to the rollups and, when it has an ASN, to the ASN's day. */
  add(s: ScoredEvent): void {
    const { tenantId, asn } = s.attributes
    const { verdict, score } = s.result
    const hourMs = Math.floor(s.createdMs / HOUR_MS) * HOUR_MS
    // The '' row carries the verdict's count and score sum; one row per distinct reason feeds top reasons.
    for (const reason of ['', ...new Set(s.result.reasons)]) {
      const k = `${tenantId}\u0000${hourMs}\u0000${verdict}\u0000${reason}`
      const r = this.rollups.get(k)
      const sum = reason === '' ? score : 0
      if (r) {
        r.n++
        r.scoreSum += sum
      } else {
        this.rollups.set(k, { tenantId, hourMs, verdict, reason, n: 1, scoreSum: sum })
      }
    }
    if (asn === null) return
    const dayMs = Math.floor(s.createdMs / DAY_MS) * DAY_MS
    const k = `${dayMs}\u0000${asn}\u0000${tenantId}`
    const a = this.asnDays.get(k)
    if (a) {
      a.events++
      a.bad += s.asnBad ? 1 : 0
    } else {
      this.asnDays.set(k, { dayMs, asn, tenantId, events: 1, bad: s.asnBad ? 1 : 0 })
    }
  }

  /**
   * The statistics and the ASN counters go out together (one statement on PostgreSQL), each sorted by
   * key. Every row of both belongs to a tenant whose usage row the group has locked just before
   * (store/events/group-meter.ts), so two groups that share a counter row already wait for each other
   * on that usage row: whichever order PostgreSQL writes the two parts in, no two groups wait on each
   * other in a cycle.
   */
  *flush(): Work<void> {
    yield* together(
      upsertAll(sortedValues(this.rollups), rollupSql, (r) => [
        r.tenantId,
        r.hourMs,
        r.verdict,
        r.reason,
        r.n,
        r.scoreSum,
      ]),
      upsertAll(sortedValues(this.asnDays), asnSql, (a) => [a.dayMs, a.asn, a.tenantId, a.events, a.bad]),
    )
    this.rollups.clear()
    this.asnDays.clear()
  }
}
