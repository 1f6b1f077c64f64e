import { type Db, type Param, q, type Work } from '../engine/db.js'

/** A message as the outbox records it: the payload, and whose data it concerns (for erasure). */
export interface NewMessage {
  id: string
  tenantId: string
  type: string
  /** The JSON body sent, exactly as signed. */
  payload: string
  createdMs: number
  subject: {
    eventId?: string | null
    userId?: string | null
    emailHash?: string | null
    ipHash?: string | null
    phoneHash?: string | null
    deviceId?: string | null
  }
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One delivery claimed by a node: it holds the lease until `leaseUntilMs`. */
export interface Claimed {
  id: number
  tenantId: string
  messageId: string
  endpointId: string
  attempts: number
  type: string
  payload: string
  createdMs: number
}

export interface DeliveryView {
  messageId: string
  type: string
  status: DeliveryStatus
  attempts: number
  nextMs: number | null
  lastStatus: number | null
  lastError: string | null
  lastAttemptMs: number | null
  deliveredMs: number | null
  createdMs: number
  payload: string
}

/** What one attempt came to, as the dispatcher decided. */
export type Outcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number | null; error: string; nextMs: number }
  | { kind: 'failed'; status: number | null; error: string }

export interface WebhookStats {
  delivered: number
  failed: number
  retrying: number
  oldestPendingMs: number | null
}

const SUBSCRIBED =
  'SELECT 1 AS x FROM webhook_endpoints WHERE tenant_id = ? AND enabled = 1 AND events LIKE ? LIMIT 1'

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

/**
 * The outbox: messages written in the transaction of the change that causes them, one delivery row per
 * endpoint subscribed at that moment. A node sends a delivery only while it holds its lease (the row's
 * holder and expiry), so no two nodes send one message to one endpoint at once; a dead node's lease
 * expires and another node takes the delivery over.
 */
export class WebhookOutbox {
  constructor(private readonly db: Db) {}

  /**
   * Records the message for every enabled endpoint of the tenant subscribed to its type; records
   * nothing when there is none (one statement on the common path). Returns the deliveries made.
   */
  *enqueue(m: NewMessage): Work<number> {
    const subscribed = `%"${m.type}"%`
    // On SQLite an INSERT … SELECT that inserts nothing still costs about three times this read (a write
    // statement, with its foreign-key checks): most tenants have no endpoint, and most scored events
    // would pay that. On PostgreSQL the read would be one more round trip whenever an endpoint exists.
    if (this.db.dialect === 'sqlite') {
      const any = yield* q.get(SUBSCRIBED, [m.tenantId, subscribed])
      if (!any) return 0
    }
    const made = yield* q.run(
      `INSERT INTO webhook_deliveries (tenant_id, message_id, endpoint_id, status, attempts, next_ms, created_ms)
       SELECT tenant_id, ?, id, 'pending', 0, ?, ? FROM webhook_endpoints
        WHERE tenant_id = ? AND enabled = 1 AND events LIKE ?`,
      [m.id, m.createdMs, m.createdMs, m.tenantId, subscribed],
    )
    if (made === 0) return 0
    const s = m.subject
    yield* q.run(
      `INSERT INTO webhook_messages (id, tenant_id, event_type, payload, event_id, user_id, email_hash, ip_hash,
         phone_hash, device_id, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        m.id,
        m.tenantId,
        m.type,
        m.payload,
        s.eventId ?? null,
        s.userId ?? null,
        s.emailHash ?? null,
        s.ipHash ?? null,
        s.phoneHash ?? null,
        s.deviceId ?? null,
        m.createdMs,
      ],
    )
    return made
  }

  /**
   * Takes up to `limit` due deliveries of enabled endpoints for `holder` until `leaseUntilMs`. PostgreSQL
   * skips rows another node is claiming right now; SQLite's single writer makes the statement atomic.
   */
  async claim(holder: string, nowMs: number, leaseUntilMs: number, limit: number): Promise<Claimed[]> {
    const skip = this.db.dialect === 'postgres' ? 'FOR UPDATE OF d SKIP LOCKED' : ''
    const due =
      "d.status = 'pending' AND d.next_ms <= ? AND (d.lease_until_ms IS NULL OR d.lease_until_ms <= ?)"
    const rows = await this.db.all<{ id: number; message_id: string; endpoint_id: string; attempts: number }>(
      `UPDATE webhook_deliveries SET lease_holder = ?, lease_until_ms = ?
        WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                      WHERE ${due} AND e.enabled = 1 ORDER BY d.next_ms LIMIT ? ${skip})
          AND status = 'pending' AND (lease_until_ms IS NULL OR lease_until_ms <= ?)
        RETURNING id, message_id, endpoint_id, attempts`,
      [holder, leaseUntilMs, nowMs, nowMs, limit, nowMs],
    )
    if (rows.length === 0) return []
    const ids = [...new Set(rows.map((r) => r.message_id))]
    const messages = await this.db.all<{
      id: string
      tenant_id: string
      event_type: string
      payload: string
      created_ms: number
    }>(
      `SELECT id, tenant_id, event_type, payload, created_ms FROM webhook_messages WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    )
    const byId = new Map(messages.map((m) => [m.id, m]))
    const out: Claimed[] = []
    for (const r of rows) {
      const m = byId.get(r.message_id)
      // Erased meanwhile: nothing left to send; the delivery row goes with the next erasure or retention.
      if (!m) continue
      out.push({
        id: Number(r.id),
        tenantId: m.tenant_id,
        messageId: m.id,
        endpointId: r.endpoint_id,
        attempts: Number(r.attempts),
        type: m.event_type,
        payload: m.payload,
        createdMs: Number(m.created_ms),
      })
    }
    return out
  }

  /** Records an attempt, only while `holder` still holds the delivery; false when it no longer does. */
  *finish(id: number, holder: string, o: Outcome, nowMs: number): Work<boolean> {
    const status = o.kind === 'retry' ? 'pending' : o.kind
    const changed = yield* q.run(
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_ms = ?, last_status = ?,
         last_error = ?, last_attempt_ms = ?, delivered_ms = ?, lease_holder = NULL, lease_until_ms = NULL
        WHERE id = ? AND lease_holder = ?`,
      [
        status,
        o.kind === 'retry' ? o.nextMs : nowMs,
        o.status,
        o.kind === 'delivered' ? null : o.error,
        nowMs,
        o.kind === 'delivered' ? nowMs : null,
        id,
        holder,
      ],
    )
    return changed > 0
  }

  /** Sends the delivery again from the start of the schedule; false when none such, null while in flight. */
  async redeliver(tenantId: string, endpointId: string, messageId: string, nowMs: number) {
    const changed = await this.db.run(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_ms = ?
        WHERE tenant_id = ? AND endpoint_id = ? AND message_id = ?
          AND (lease_until_ms IS NULL OR lease_until_ms <= ?)`,
      [nowMs, tenantId, endpointId, messageId, nowMs],
    )
    if (changed > 0) return true
    const exists = await this.db.get<{ id: number }>(
      'SELECT id FROM webhook_deliveries WHERE tenant_id = ? AND endpoint_id = ? AND message_id = ?',
      [tenantId, endpointId, messageId],
    )
    return exists ? null : false
  }

  async deliveries(
    tenantId: string,
    endpointId: string,
    limit: number,
    offset: number,
    status?: DeliveryStatus,
  ): Promise<{ deliveries: DeliveryView[]; total: number }> {
    const filter = status ? ' AND d.status = ?' : ''
    const params: Param[] = status ? [tenantId, endpointId, status] : [tenantId, endpointId]
    const rows = await this.db.all<Record<string, unknown>>(
      `SELECT d.message_id, m.event_type, d.status, d.attempts, d.next_ms, d.last_status, d.last_error,
              d.last_attempt_ms, d.delivered_ms, d.created_ms, m.payload
         FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
        WHERE d.tenant_id = ? AND d.endpoint_id = ?${filter}
        ORDER BY d.created_ms DESC, d.id DESC LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    )
    const total = await this.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
        WHERE d.tenant_id = ? AND d.endpoint_id = ?${filter}`,
      params,
    )
    return {
      deliveries: rows.map((r) => ({
        messageId: String(r['message_id']),
        type: String(r['event_type']),
        status: r['status'] as DeliveryStatus,
        attempts: Number(r['attempts']),
        nextMs: r['status'] === 'pending' ? n(r['next_ms']) : null,
        lastStatus: n(r['last_status']),
        lastError: (r['last_error'] as string | null) ?? null,
        lastAttemptMs: n(r['last_attempt_ms']),
        deliveredMs: n(r['delivered_ms']),
        createdMs: Number(r['created_ms']),
        payload: String(r['payload']),
      })),
      total: Number(total?.n ?? 0),
    }
  }

  /** The four numbers of the metrics: delivered and failed deliveries kept, retrying ones, the oldest due. */
  async stats(): Promise<WebhookStats> {
    const r = await this.db.get<Record<string, unknown>>(
      `SELECT SUM(CASE WHEN status = 'delivered' THEN 1 ELSE 0 END) AS delivered,
              SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
              SUM(CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END) AS retrying,
              MIN(CASE WHEN status = 'pending' THEN created_ms END) AS oldest
         FROM webhook_deliveries`,
    )
    return {
      delivered: Number(r?.['delivered'] ?? 0),
      failed: Number(r?.['failed'] ?? 0),
      retrying: Number(r?.['retrying'] ?? 0),
      oldestPendingMs: n(r?.['oldest']),
    }
  }

  /** Deletes up to `limit` messages created before the cutoff, with their deliveries. */
  expire(cutoffMs: number, limit: number): Promise<number> {
    return this.db.tx(function* () {
      const ids = (yield* q.all<{ id: string }>(
        'SELECT id FROM webhook_messages WHERE created_ms < ? ORDER BY created_ms LIMIT ?',
        [cutoffMs, limit],
      )).map((r) => r.id)
      if (ids.length === 0) return 0
      const marks = ids.map(() => '?').join(', ')
      yield* q.run(`DELETE FROM webhook_deliveries WHERE message_id IN (${marks})`, ids)
      return yield* q.run(`DELETE FROM webhook_messages WHERE id IN (${marks})`, ids)
    })
  }
}

/**
 * Erasure's part: the messages about the subject (by its identifiers, or about one of its events as
 * `eventWhere` selects them from `events`), with their deliveries. Run before the events go.
 */
export function* eraseMessages(
  tenantId: string,
  own: { where: string; params: Param[] },
  eventWhere: { where: string; params: Param[] },
): Work<number> {
  const match = `tenant_id = ? AND (${own.where} OR event_id IN (SELECT id FROM events WHERE tenant_id = ? AND ${eventWhere.where}))`
  const params: Param[] = [tenantId, ...own.params, tenantId, ...eventWhere.params]
  yield* q.run(
    `DELETE FROM webhook_deliveries WHERE tenant_id = ? AND message_id IN (SELECT id FROM webhook_messages WHERE ${match})`,
    [tenantId, ...params],
  )
  return yield* q.run(`DELETE FROM webhook_messages WHERE ${match}`, params)
}
