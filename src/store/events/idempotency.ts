import { type Db, q, type Work } from '../engine/db.js'

/** A finished request under an Idempotency-Key: what a retry gets back. */
export interface StoredResponse {
  requestHash: string
  body: string
  createdMs: number
}

/**
 * Idempotency keys, stored as keyed hashes per tenant. A key is claimed inside the transaction that
 * records the request's effects, and its response is written in that same transaction: a crash before
 * the commit leaves neither, a crash after it leaves both, so a retry never counts twice.
 */
export class IdempotencyStore {
  constructor(private readonly db: Db) {}

  async get(tenantId: string, keyHash: string, notBeforeMs: number): Promise<StoredResponse | undefined> {
    const row = await this.db.get<{ request_hash: string; body: string; created_ms: number }>(
      'SELECT request_hash, body, created_ms FROM idempotency_keys WHERE tenant_id = ? AND key_hash = ? AND created_ms >= ?',
      [tenantId, keyHash, notBeforeMs],
    )
    return row && { requestHash: row.request_hash, body: row.body, createdMs: Number(row.created_ms) }
  }

  /**
   * Takes the key for this request; false when a live claim of it exists (committed, or on PostgreSQL
   * committed by the concurrent transaction this insert waited for). An expired one is taken over.
   */
  *claim(
    tenantId: string,
    keyHash: string,
    requestHash: string,
    nowMs: number,
    expiredBeforeMs: number,
  ): Work<boolean> {
    const row = yield* q.get<{ ok: number }>(
      `INSERT INTO idempotency_keys (tenant_id, key_hash, request_hash, body, created_ms) VALUES (?, ?, ?, '', ?)
       ON CONFLICT (tenant_id, key_hash) DO UPDATE SET request_hash = excluded.request_hash, body = '',
         created_ms = excluded.created_ms
       WHERE idempotency_keys.created_ms < ?
       RETURNING 1 AS ok`,
      [tenantId, keyHash, requestHash, nowMs, expiredBeforeMs],
    )
    if (row === undefined) return false
    // An expired key taken over: the events of its old response are not this request's.
    yield* q.run('DELETE FROM idempotency_events WHERE tenant_id = ? AND key_hash = ?', [tenantId, keyHash])
    return true
  }

  /** The response (sealed) and the events it names, which erasure of any of them deletes it with. */
  *complete(tenantId: string, keyHash: string, body: string, eventIds: readonly string[]): Work<void> {
    yield* q.run('UPDATE idempotency_keys SET body = ? WHERE tenant_id = ? AND key_hash = ?', [
      body,
      tenantId,
      keyHash,
    ])
    for (const eventId of new Set(eventIds)) {
      yield* q.run(
        'INSERT INTO idempotency_events (tenant_id, event_id, key_hash) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
        [tenantId, eventId, keyHash],
      )
    }
  }

  *release(tenantId: string, keyHash: string): Work<void> {
    yield* q.run('DELETE FROM idempotency_keys WHERE tenant_id = ? AND key_hash = ?', [tenantId, keyHash])
  }

  /** After the commit: the response as finally sent (the AI text arrives after the write). */
  async refine(tenantId: string, keyHash: string, body: string): Promise<void> {
    await this.db.run('UPDATE idempotency_keys SET body = ? WHERE tenant_id = ? AND key_hash = ?', [
      body,
      tenantId,
      keyHash,
    ])
  }

  /** Deletes keys past their life, at most `limit`; returns how many. */
  async expire(beforeMs: number, limit: number): Promise<number> {
    return this.db.run(
      `DELETE FROM idempotency_keys WHERE (tenant_id, key_hash) IN (
         SELECT tenant_id, key_hash FROM idempotency_keys WHERE created_ms < ? LIMIT ?)`,
      [beforeMs, limit],
    )
  }
}
