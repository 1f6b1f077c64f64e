import { type Db, q, type Work } from '../engine/db.js'
import { Cached, type Invalidation, tenantScoped } from '../engine/invalidation.js'

/** A tenant's webhook endpoint as stored. `events` is the list of subscribed event types. */
export interface WebhookEndpoint {
  id: string
  tenantId: string
  url: string
  description: string
  events: string[]
  enabled: boolean
  disabledReason: string | null
  /** The current signing secret (`whsec_…`). */
  secret: string
  /** The secret before the last rotation, still signing alongside until `previousUntilMs`. */
  previousSecret: string | null
  previousUntilMs: number | null
  /** Since when every attempt to this endpoint failed (null after a success). */
  failingSinceMs: number | null
  createdMs: number
  updatedMs: number
}

interface Row {
  id: string
  tenant_id: string
  url: string
  description: string
  events: string
  enabled: number | boolean
  disabled_reason: string | null
  secret: string
  previous_secret: string | null
  previous_until_ms: number | string | null
  failing_since_ms: number | string | null
  created_ms: number | string
  updated_ms: number | string
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v))

const toEndpoint = (r: Row): WebhookEndpoint => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  description: r.description,
  events: JSON.parse(r.events) as string[],
  enabled: Number(r.enabled) === 1,
  disabledReason: r.disabled_reason,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousUntilMs: num(r.previous_until_ms),
  failingSinceMs: num(r.failing_since_ms),
  createdMs: Number(r.created_ms),
  updatedMs: Number(r.updated_ms),
})

const COLS = `id, tenant_id, url, description, events, enabled, disabled_reason, secret, previous_secret,
  previous_until_ms, failing_since_ms, created_ms, updated_ms`

export interface EndpointChange {
  url?: string
  description?: string
  events?: string[]
  enabled?: boolean
}

/** The topic that drops a tenant's cached subscriptions (store/engine/invalidation.ts). */
const topic = (tenantId: string) => `webhooks:${tenantId}`

/** Webhook endpoints; every query is scoped by tenant. */
export class WebhookEndpointStore {
  private readonly subscriptions: Cached<string, ReadonlySet<string>>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.subscriptions = new Cached(inv, tenantScoped('webhooks'))
  }

  /**
   * The event types the tenant's enabled endpoints subscribe to, from memory: every write below that can
   * change them (here or on another node) drops the copy. Scoring reads it before its transaction, so a
   * tenant without a subscribed endpoint costs no statement per decision.
   */
  subscribedTypes(tenantId: string): Promise<ReadonlySet<string>> {
    return this.subscriptions.get(tenantId, async () => {
      const rows = await this.db.all<{ events: string }>(
        'SELECT events FROM webhook_endpoints WHERE tenant_id = ? AND enabled = 1',
        [tenantId],
      )
      return new Set(rows.flatMap((r) => JSON.parse(r.events) as string[]))
    })
  }

  create(e: Omit<WebhookEndpoint, 'previousSecret' | 'previousUntilMs' | 'failingSinceMs'>): Promise<void> {
    const inv = this.inv
    return this.db.tx(function* () {
      yield* q.run(
        `INSERT INTO webhook_endpoints (id, tenant_id, url, description, events, enabled, disabled_reason,
           secret, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          e.id,
          e.tenantId,
          e.url,
          e.description,
          JSON.stringify(e.events),
          e.enabled ? 1 : 0,
          e.disabledReason,
          e.secret,
          e.createdMs,
          e.updatedMs,
        ],
      )
      yield* inv.touch(topic(e.tenantId))
    })
  }

  async get(tenantId: string, id: string): Promise<WebhookEndpoint | null> {
    const r = await this.db.get<Row>(`SELECT ${COLS} FROM webhook_endpoints WHERE tenant_id = ? AND id = ?`, [
      tenantId,
      id,
    ])
    return r ? toEndpoint(r) : null
  }

  async list(tenantId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.all<Row>(
      `SELECT ${COLS} FROM webhook_endpoints WHERE tenant_id = ? ORDER BY created_ms, id`,
      [tenantId],
    )
    return rows.map(toEndpoint)
  }

  /** Endpoints by id, whatever their tenant (the dispatcher's read; ids are random). */
  async byIds(ids: readonly string[]): Promise<Map<string, WebhookEndpoint>> {
    if (ids.length === 0) return new Map()
    const rows = await this.db.all<Row>(
      `SELECT ${COLS} FROM webhook_endpoints WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    )
    return new Map(rows.map((r) => [r.id, toEndpoint(r)]))
  }

  /** Applies the fields given; enabling clears the failure state and the disabling reason. */
  async update(tenantId: string, id: string, c: EndpointChange, nowMs: number): Promise<boolean> {
    const sets: string[] = ['updated_ms = ?']
    const params: (string | number | null)[] = [nowMs]
    const set = (col: string, v: string | number) => {
      sets.push(`${col} = ?`)
      params.push(v)
    }
    if (c.url !== undefined) set('url', c.url)
    if (c.description !== undefined) set('description', c.description)
    if (c.events !== undefined) set('events', JSON.stringify(c.events))
    if (c.enabled !== undefined) {
      set('enabled', c.enabled ? 1 : 0)
      if (c.enabled) sets.push('disabled_reason = NULL', 'failing_since_ms = NULL')
      else set('disabled_reason', 'disabled by the tenant')
    }
    const inv = this.inv
    return this.db.tx(function* () {
      const n = yield* q.run(
        `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE tenant_id = ? AND id = ?`,
        [...params, tenantId, id],
      )
      if (n > 0 && (c.events !== undefined || c.enabled !== undefined)) yield* inv.touch(topic(tenantId))
      return n > 0
    })
  }

  /** A new current secret; the old one keeps signing too until `previousUntilMs`. */
  async rotate(tenantId: string, id: string, secret: string, previousUntilMs: number, nowMs: number) {
    const n = await this.db.run(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_until_ms = ?, secret = ?, updated_ms = ?
        WHERE tenant_id = ? AND id = ?`,
      [previousUntilMs, secret, nowMs, tenantId, id],
    )
    return n > 0
  }

  /** Deletes the endpoint with its deliveries (messages no endpoint needs any more go with retention). */
  remove(tenantId: string, id: string): Promise<boolean> {
    const inv = this.inv
    return this.db.tx(function* () {
      yield* q.run('DELETE FROM webhook_deliveries WHERE tenant_id = ? AND endpoint_id = ?', [tenantId, id])
      const n = yield* q.run('DELETE FROM webhook_endpoints WHERE tenant_id = ? AND id = ?', [tenantId, id])
      if (n > 0) yield* inv.touch(topic(tenantId))
      return n > 0
    })
  }

  /** Records one attempt's outcome on the endpoint: a success clears the failure state. */
  *noteOutcome(id: string, ok: boolean, nowMs: number): Work<void> {
    if (ok) yield* q.run('UPDATE webhook_endpoints SET failing_since_ms = NULL WHERE id = ?', [id])
    else
      yield* q.run(
        'UPDATE webhook_endpoints SET failing_since_ms = COALESCE(failing_since_ms, ?) WHERE id = ?',
        [nowMs, id],
      )
  }

  /** Disables an endpoint that kept failing, with the reason the tenant sees. */
  *disable(id: string, reason: string, nowMs: number): Work<void> {
    const r = yield* q.get<{ tenant_id: string }>(
      'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_ms = ? WHERE id = ? AND enabled = 1 RETURNING tenant_id',
      [reason, nowMs, id],
    )
    if (r) yield* this.inv.touch(topic(r.tenant_id))
  }
}
