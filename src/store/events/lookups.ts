import type { CheckedKind } from '../../util/entities.js'
import { type Db, q, type Work } from '../engine/db.js'

export interface LookupRecord {
  id: number
  kind: CheckedKind
  valueHash: string
  hint: string
  fraudScore: number
  createdMs: number
}

export interface LookupRow {
  id: number
  kind: CheckedKind
  value_hash: string
  hint: string
  fraud_score: number
  created_ms: number
}

export const LOOKUP_COLUMNS = 'id, kind, value_hash, hint, fraud_score, created_ms'

export const toLookupRecord = (r: LookupRow): LookupRecord => ({
  id: Number(r.id),
  kind: r.kind,
  valueHash: r.value_hash,
  hint: r.hint,
  fraudScore: Number(r.fraud_score),
  createdMs: Number(r.created_ms),
})

/** The tenant's history of identifier checks: hashes and masked hints only. */
export class LookupStore {
  constructor(private readonly db: Db) {}

  *add(tenantId: string, rows: readonly Omit<LookupRecord, 'id'>[]): Work<void> {
    for (const r of rows) {
      yield* q.run(
        'INSERT INTO lookups (tenant_id, kind, value_hash, hint, fraud_score, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
        [tenantId, r.kind, r.valueHash, r.hint, r.fraudScore, r.createdMs],
      )
    }
  }

  async list(
    tenantId: string,
    opts: { limit: number; offset: number; kind?: CheckedKind },
  ): Promise<{ lookups: LookupRecord[]; total: number }> {
    const where = opts.kind ? 'tenant_id = ? AND kind = ?' : 'tenant_id = ?'
    const params = opts.kind ? [tenantId, opts.kind] : [tenantId]
    const rows = await this.db.all<LookupRow>(
      `SELECT ${LOOKUP_COLUMNS} FROM lookups WHERE ${where}
       ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?`,
      [...params, opts.limit, opts.offset],
    )
    const total = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM lookups WHERE ${where}`, params)
    return { lookups: rows.map(toLookupRecord), total: Number(total?.n ?? 0) }
  }
}
