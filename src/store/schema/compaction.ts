import { type Db, q, type Work } from '../engine/db.js'

/**
 * The tables an erasure deleted from whose files still hold the deleted bytes (PostgreSQL), kept in the
 * database so that a crash or a restart between the erasure and the rewrite loses no table.
 */
export class CompactionStore {
  constructor(private readonly db: Db) {}

  /** Whether erasures on this engine leave bytes that a rewrite must remove. */
  get needed(): boolean {
    return !this.db.reclaimErasesBytes
  }

  /**
   * Inside the erasure's transaction: the tables wait for a rewrite. The mark only ever grows, so a
   * rewrite that read an older mark never clears one set after it read.
   */
  *mark(tables: readonly string[], nowMs: number): Work<void> {
    if (!this.needed) return
    for (const t of tables) {
      yield* q.run(
        `INSERT INTO storage_compaction (table_name, since_ms) VALUES (?, ?)
         ON CONFLICT (table_name) DO UPDATE SET since_ms = CASE
           WHEN excluded.since_ms > storage_compaction.since_ms THEN excluded.since_ms
           ELSE storage_compaction.since_ms + 1 END`,
        [t, nowMs],
      )
    }
  }

  async pending(): Promise<{ table: string; sinceMs: number }[]> {
    const rows = await this.db.all<{ table_name: string; since_ms: number }>(
      'SELECT table_name, since_ms FROM storage_compaction ORDER BY table_name',
    )
    return rows.map((r) => ({ table: r.table_name, sinceMs: Number(r.since_ms) }))
  }

  /**
   * Rewrites one waiting table and clears its mark, unless an erasure marked it again after `sinceMs`
   * (that erasure's rows may be newer than the rewrite's copy, so the table keeps waiting).
   */
  async rewrite(table: string, sinceMs: number, lockTimeoutMs: number): Promise<void> {
    await this.db.rewrite(table, lockTimeoutMs)
    await this.db.run('DELETE FROM storage_compaction WHERE table_name = ? AND since_ms <= ?', [
      table,
      sinceMs,
    ])
  }
}
