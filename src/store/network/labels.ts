import { type Db, type Param, q, type Work } from '../engine/db.js'
import { LABEL_COLUMNS, type LabelRecord, type LabelRow, toLabel } from '../privacy/privacy.js'

const COLS = LABEL_COLUMNS

export interface LabelFilter {
  limit: number
  offset: number
  eventId?: string
  userId?: string
  label?: string
  sinceMs?: number
  untilMs?: number
}

/** Reads and withdrawals of outcome labels (they are written with the label's other effects, privacy.addLabel). */
export class LabelStore {
  constructor(private readonly db: Db) {}

  async list(tenantId: string, f: LabelFilter): Promise<{ labels: LabelRecord[]; total: number }> {
    const where = ['tenant_id = ?']
    const params: Param[] = [tenantId]
    const add = (sql: string, value: Param | undefined) => {
      if (value === undefined) return
      where.push(sql)
      params.push(value)
    }
    add('event_id = ?', f.eventId)
    add('user_id = ?', f.userId)
    add('label = ?', f.label)
    add('created_ms >= ?', f.sinceMs)
    add('created_ms < ?', f.untilMs)
    const w = where.join(' AND ')
    const rows = await this.db.all<LabelRow>(
      `SELECT ${COLS} FROM labels WHERE ${w} ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?`,
      [...params, f.limit, f.offset],
    )
    const total = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM labels WHERE ${w}`, params)
    return { labels: rows.map(toLabel), total: Number(total?.n ?? 0) }
  }

  async get(tenantId: string, id: number): Promise<LabelRecord | undefined> {
    const r = await this.db.get<LabelRow>(`SELECT ${COLS} FROM labels WHERE tenant_id = ? AND id = ?`, [
      tenantId,
      id,
    ])
    return r ? toLabel(r) : undefined
  }

  /**
   * The labels that apply to these events: those on the event itself and those on its user (a label
   * that targets a user_id covers all of that user's events). Keyed by event id, oldest first.
   */
  async forEvents(
    tenantId: string,
    events: readonly { id: string; userId: string | null }[],
  ): Promise<Map<string, LabelRecord[]>> {
    const out = new Map<string, LabelRecord[]>(events.map((e) => [e.id, []]))
    if (events.length === 0) return out
    const ids = events.map((e) => e.id)
    const users = [...new Set(events.flatMap((e) => (e.userId === null ? [] : [e.userId])))]
    const byUser = users.length
      ? ` OR (event_id IS NULL AND user_id IN (${users.map(() => '?').join(', ')}))`
      : ''
    const rows = await this.db.all<LabelRow>(
      `SELECT ${COLS} FROM labels WHERE tenant_id = ? AND (event_id IN (${ids.map(() => '?').join(', ')})${byUser})
        ORDER BY created_ms, id`,
      [tenantId, ...ids, ...users],
    )
    for (const r of rows.map(toLabel)) {
      if (r.eventId !== null) out.get(r.eventId)?.push(r)
      else for (const e of events) if (e.userId === r.userId) out.get(e.id)?.push(r)
    }
    return out
  }

  /** The label already saying this about this event (or user), if any: the same label twice is one. */
  *same(
    tenantId: string,
    target: { eventId: string | null; userId: string | null },
    label: string,
  ): Work<number | undefined> {
    const row =
      target.eventId !== null
        ? yield* q.get<{ id: number }>(
            'SELECT id FROM labels WHERE tenant_id = ? AND event_id = ? AND label = ? ORDER BY id LIMIT 1',
            [tenantId, target.eventId, label],
          )
        : yield* q.get<{ id: number }>(
            'SELECT id FROM labels WHERE tenant_id = ? AND event_id IS NULL AND user_id = ? AND label = ? ORDER BY id LIMIT 1',
            [tenantId, target.userId, label],
          )
    return row ? Number(row.id) : undefined
  }

  *remove(tenantId: string, id: number): Work<boolean> {
    return (yield* q.run('DELETE FROM labels WHERE tenant_id = ? AND id = ?', [tenantId, id])) > 0
  }
}
