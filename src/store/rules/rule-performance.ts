import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db } from '../engine/db.js'
import { HOUR_MS } from '../events/aggregates.js'

/**
 * The condition that keeps, of an event's labels `l`, only its latest (the highest created_ms, then the
 * highest id): the label an event counts under wherever outcomes are read.
 */
export const LATEST_LABEL = `NOT EXISTS (
  SELECT 1 FROM labels later
   WHERE later.tenant_id = l.tenant_id AND later.event_id = l.event_id
     AND (later.created_ms > l.created_ms OR (later.created_ms = l.created_ms AND later.id > l.id)))`

/** The outcome an event counts under: its latest label, fraud and chargeback both counting as fraud. */
export type Outcome = 'fraud' | 'legit'

export interface LabelledEvent {
  reasons: string[]
  /** Ids of the tenant's shadow rules that held on the event (recorded, never decided). */
  shadow: string[]
  outcome: Outcome
}

const ids = (json: string | null): string[] => (json ? [...new Set(JSON.parse(json) as string[])] : [])

/**
 * The raw material of the per-rule performance report for one tenant over (sinceMs, untilMs]: how many
 * events each reason code fired on, and every labelled event of the window with its reason codes.
 */
/** Edge hours are read this much time at a time. */
const EDGE_SLICE_MS = 5 * 60_000
/** Shadow hits and labelled events are read this many rows at a time. */
const PAGE = 1000

export class RulePerformanceStore {
  constructor(private readonly db: Db) {}

  /**
   * Events each reason code fired on: whole hours from the hourly rollup (one query), the partial
   * hours at either edge from the events themselves, five minutes at a time.
   */
  async fired(tenantId: string, sinceMs: number, untilMs: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    const add = (reason: string, n: number) => counts.set(reason, (counts.get(reason) ?? 0) + n)
    const firstFull = Math.floor(sinceMs / HOUR_MS) * HOUR_MS + HOUR_MS
    const endFull = Math.floor((untilMs + 1) / HOUR_MS) * HOUR_MS
    const edges: [number, number][] = []
    if (firstFull < endFull) {
      const rows = await this.db.all<{ reason: string; n: number }>(
        `SELECT reason, SUM(n) AS n FROM event_rollup
          WHERE tenant_id = ? AND hour_ms >= ? AND hour_ms < ? AND reason <> '' GROUP BY reason`,
        [tenantId, firstFull, endFull],
      )
      for (const r of rows) add(r.reason, Number(r.n))
      edges.push([sinceMs, firstFull - 1], [endFull - 1, untilMs])
    } else edges.push([sinceMs, untilMs])
    // The edge hours hold as many events as the tenant scored in them: read them a slice of time at a
    // time, each one range of the time index, with a turn of the event loop between (on SQLite a read
    // holds the loop; one read of a busy hour held it ~100 ms, bench/heavy-fairness.ts).
    for (const [from, to] of edges)
      for (let at = from; at < to; at += EDGE_SLICE_MS) {
        const rows = await this.db.all<{ reasons: string }>(
          'SELECT reasons FROM events WHERE tenant_id = ? AND created_ms > ? AND created_ms <= ?',
          [tenantId, at, Math.min(to, at + EDGE_SLICE_MS)],
        )
        for (const r of rows) for (const reason of new Set(JSON.parse(r.reasons) as string[])) add(reason, 1)
        await nextTurn()
      }
    return counts
  }

  /**
   * Events each shadow rule held on: read from the events that recorded a shadow hit (no rollup holds
   * them: shadow hits are not reasons of the decision), through the partial index of those events
   * (migration 31), a page at a time with a turn of the event loop between.
   */
  async shadowFired(tenantId: string, sinceMs: number, untilMs: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    // Keyset over (created_ms, id) inside (sinceMs, untilMs]: the first page starts past sinceMs.
    let after: [number, string] = [sinceMs, '']
    for (;;) {
      const rows = await this.db.all<{ id: string; created_ms: number; shadow_rules: string }>(
        `SELECT id, created_ms, shadow_rules FROM events
          WHERE tenant_id = ? AND shadow_rules IS NOT NULL AND created_ms > ? AND created_ms <= ?
            AND (created_ms > ? OR (created_ms = ? AND id > ?))
          ORDER BY created_ms, id LIMIT ${PAGE}`,
        [tenantId, sinceMs, untilMs, after[0], after[0], after[1]],
      )
      for (const r of rows) for (const id of ids(r.shadow_rules)) counts.set(id, (counts.get(id) ?? 0) + 1)
      if (rows.length < PAGE) return counts
      const last = rows[rows.length - 1]!
      after = [Number(last.created_ms), last.id]
      await nextTurn()
    }
  }

  /**
   * Every event of the window that carries a label, with the latest of its labels (the highest
   * created_ms, then the highest id): both tables filtered by the tenant, a page of events at a time in
   * event-id order (the labels index), with a turn of the event loop between pages.
   */
  async labelled(tenantId: string, sinceMs: number, untilMs: number): Promise<LabelledEvent[]> {
    const out: LabelledEvent[] = []
    let after = ''
    for (;;) {
      const rows = await this.db.all<{
        event_id: string
        reasons: string
        shadow_rules: string | null
        label: string
      }>(
        `SELECT l.event_id AS event_id, e.reasons AS reasons, e.shadow_rules AS shadow_rules, l.label AS label
           FROM labels l JOIN events e ON e.id = l.event_id AND e.tenant_id = l.tenant_id
          WHERE l.tenant_id = ? AND l.event_id > ? AND e.tenant_id = ? AND e.created_ms > ? AND e.created_ms <= ?
            AND ${LATEST_LABEL}
          ORDER BY l.event_id LIMIT ${PAGE}`,
        [tenantId, after, tenantId, sinceMs, untilMs],
      )
      for (const r of rows)
        out.push({
          reasons: ids(r.reasons),
          shadow: ids(r.shadow_rules),
          outcome: r.label === 'legit' ? 'legit' : 'fraud',
        })
      if (rows.length < PAGE) return out
      after = rows[rows.length - 1]!.event_id
      await nextTurn()
    }
  }
}
