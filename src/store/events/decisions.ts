import type { RecordedInput } from '../../scoring/recorded.js'
import type { Db } from '../engine/db.js'
import { LATEST_LABEL, type Outcome } from '../rules/rule-performance.js'
import { jsonText, unpackJson } from './compact-json.js'

/** A recorded decision with what it can be decided again from (null for events recorded before that existed). */
export interface RecordedDecision {
  id: string
  createdMs: number
  score: number
  verdict: string
  reasons: string[]
  /** The fired checks as JSON, as recorded. */
  checks: string
  configVersion: number | null
  rulesVersion: string | null
  /** The recorded engine input. */
  inputs: RecordedInput | null
}

/** One event as a simulation reads it. */
export interface DecisionRow {
  id: string
  createdMs: number
  verdict: string
  configVersion: number | null
  rulesVersion: string | null
  inputs: RecordedInput | null
}

type Row = {
  id: string
  created_ms: number
  score: number
  verdict: string
  reasons: string
  checks: string
  config_version: number | null
  rules_version: string | null
  inputs: string | null
}

const nullableInt = (v: number | null) => (v === null ? null : Number(v))

const PAGE_COLUMNS = 'id, created_ms, verdict, config_version, rules_version, inputs'

const toDecisionRow = (r: Row): DecisionRow => ({
  id: r.id,
  createdMs: Number(r.created_ms),
  verdict: r.verdict,
  configVersion: nullableInt(r.config_version),
  rulesVersion: r.rules_version,
  inputs: r.inputs === null ? null : unpackJson<RecordedInput>(r.inputs),
})

/** Recorded decisions of one tenant: for replay (one event) and for simulation (pages, newest first). */
export class DecisionStore {
  constructor(private readonly db: Db) {}

  async one(tenantId: string, eventId: string): Promise<RecordedDecision | null> {
    const r = await this.db.get<Row>(
      `SELECT id, created_ms, score, verdict, reasons, checks, config_version, rules_version, inputs
         FROM events WHERE tenant_id = ? AND id = ?`,
      [tenantId, eventId],
    )
    if (!r) return null
    return {
      id: r.id,
      createdMs: Number(r.created_ms),
      score: Number(r.score),
      verdict: r.verdict,
      reasons: JSON.parse(r.reasons) as string[],
      checks: jsonText(r.checks),
      configVersion: nullableInt(r.config_version),
      rulesVersion: r.rules_version,
      inputs: r.inputs === null ? null : unpackJson<RecordedInput>(r.inputs),
    }
  }

  /**
   * Up to `limit` events of [sinceMs, beforeMs), newest first. Ordered by time alone, so the tenant-time
   * index yields them without a sort; the caller completes a page's oldest millisecond with `at`.
   */
  async page(tenantId: string, sinceMs: number, beforeMs: number, limit: number): Promise<DecisionRow[]> {
    const rows = await this.db.all<Row>(
      `SELECT ${PAGE_COLUMNS} FROM events WHERE tenant_id = ? AND created_ms >= ? AND created_ms < ?
        ORDER BY created_ms DESC LIMIT ?`,
      [tenantId, sinceMs, beforeMs, limit],
    )
    return rows.map(toDecisionRow)
  }

  /**
   * The ids of every event of one millisecond (a batch of up to 1,000 shares one): reading only the id,
   * the first column, leaves the recorded inputs unread, so the caller can fetch them in pages (`byIds`).
   */
  async idsAt(tenantId: string, ms: number): Promise<string[]> {
    const rows = await this.db.all<{ id: string }>(
      'SELECT id FROM events WHERE tenant_id = ? AND created_ms = ?',
      [tenantId, ms],
    )
    return rows.map((r) => r.id)
  }

  /**
   * These events of the tenant, all of millisecond `ms` (as `idsAt` gave them), in no particular order.
   * The tenant is checked on the rows: with `tenant_id = ?` in the query SQLite walked a tenant-wide
   * index instead of the ids' primary key (measured: seconds for a 100,000-event tenant).
   */
  async byIds(tenantId: string, ms: number, ids: readonly string[]): Promise<DecisionRow[]> {
    if (ids.length === 0) return []
    const rows = await this.db.all<Row & { tenant_id: string }>(
      `SELECT tenant_id, ${PAGE_COLUMNS} FROM events WHERE id IN (${ids.map(() => '?').join(', ')}) AND created_ms = ?`,
      [...ids, ms],
    )
    return rows.filter((r) => r.tenant_id === tenantId).map(toDecisionRow)
  }

  /** The latest label of every labelled event of [sinceMs, untilMs] (fraud and chargeback as fraud). */
  async outcomes(tenantId: string, sinceMs: number, untilMs: number): Promise<Map<string, Outcome>> {
    const rows = await this.db.all<{ event_id: string; label: string }>(
      `SELECT l.event_id AS event_id, l.label AS label
         FROM labels l JOIN events e ON e.id = l.event_id AND e.tenant_id = l.tenant_id
        WHERE l.tenant_id = ? AND e.tenant_id = ? AND e.created_ms >= ? AND e.created_ms <= ?
          AND ${LATEST_LABEL}`,
      [tenantId, tenantId, sinceMs, untilMs],
    )
    return new Map(rows.map((r) => [r.event_id, r.label === 'legit' ? 'legit' : 'fraud']))
  }

  /** The tenant an event belongs to: only the operator's CLI asks, to replay an event by its id alone. */
  async tenantOfEvent(eventId: string): Promise<string | null> {
    const r = await this.db.get<{ tenant_id: string }>('SELECT tenant_id FROM events WHERE id = ?', [eventId])
    return r?.tenant_id ?? null
  }
}
