import { eraseLinks, type ObservationLinkSource } from '../devices/links.js'
import { type Db, type Param, q, type Work } from '../engine/db.js'
import { Cached, type Invalidation, tenantScoped } from '../engine/invalidation.js'
import { EVENT_COLUMNS, type EventRow, toEventRecord } from '../events/events.js'
import { ipAccountPairsOf, rederiveIpAccounts } from '../events/ip-accounts.js'
import { LOOKUP_COLUMNS, type LookupRow, toLookupRecord } from '../events/lookups.js'
import { eraseMessages } from '../webhooks/outbox.js'

/** `withdraw`: a label that had flagged these entities in the operator network was withdrawn. */
export type SuppressionAction = 'forget' | 'legit' | 'withdraw'

export interface Suppression {
  action: SuppressionAction
  entityType: string
  /** One-way hash, keyed apart from the storage hashes so erasure leaves no storage hash behind. */
  valueHash: string
  eventId: string | null
  createdMs: number
}

export interface LabelRecord {
  id: number
  eventId: string | null
  label: string
  note: string | null
  emailHash: string | null
  ipHash: string | null
  deviceId: string | null
  userId: string | null
  createdMs: number
}

/** The columns of a label row, in LabelRow's order (shared with store/network/labels.ts). */
export const LABEL_COLUMNS = 'id, event_id, label, note, email_hash, ip_hash, device_id, user_id, created_ms'

export interface LabelRow {
  id: number
  event_id: string | null
  label: string
  note: string | null
  email_hash: string | null
  ip_hash: string | null
  device_id: string | null
  user_id: string | null
  created_ms: number
}

export const toLabel = (r: LabelRow): LabelRecord => ({
  id: Number(r.id),
  eventId: r.event_id,
  label: r.label,
  note: r.note,
  emailHash: r.email_hash,
  ipHash: r.ip_hash,
  deviceId: r.device_id,
  userId: r.user_id,
  createdMs: Number(r.created_ms),
})

/** Rows one erasure deleted, per table. */
export interface ErasedCounts {
  events: number
  lookups: number
  listEntries: number
  labels: number
  observations: number
  /** Stored idempotent responses that named an erased event. */
  idempotentResponses: number
}

/** The identifiers of one data subject, in their stored forms. */
export interface SubjectKeys {
  emailHash?: string
  ipHash?: string
  phoneHash?: string
  deviceId?: string
  userId?: string
}

/** `(col = ? OR col = ?)` over the keys present; the same matcher serves export and erasure. */
function matcher(
  keys: SubjectKeys,
  cols: Partial<Record<keyof SubjectKeys, string>>,
): { where: string; params: Param[] } {
  const parts: string[] = []
  const params: Param[] = []
  for (const [k, col] of Object.entries(cols) as [keyof SubjectKeys, string][]) {
    const v = keys[k]
    if (v === undefined) continue
    parts.push(`${col} = ?`)
    params.push(v)
  }
  return { where: parts.length ? `(${parts.join(' OR ')})` : '(1 = 0)', params }
}

export const EVENT_COLS = {
  emailHash: 'email_hash',
  ipHash: 'ip_hash',
  phoneHash: 'phone_hash',
  deviceId: 'device_id',
  userId: 'user_id',
}
const LABEL_COLS = { emailHash: 'email_hash', ipHash: 'ip_hash', deviceId: 'device_id', userId: 'user_id' }

export class PrivacyStore {
  /** Each tenant's suppression hashes, in memory: scoring checks them on every event. */
  private readonly suppressedCache: Cached<string, ReadonlySet<string>>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.suppressedCache = new Cached(inv, tenantScoped('suppressions'), 1000)
  }

  *addLabel(tenantId: string, l: Omit<LabelRecord, 'id'>): Work<number> {
    const row = yield* q.get<{ id: number }>(
      `INSERT INTO labels (tenant_id, event_id, label, note, email_hash, ip_hash, device_id, user_id, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [tenantId, l.eventId, l.label, l.note, l.emailHash, l.ipHash, l.deviceId, l.userId, l.createdMs],
    )
    return Number(row?.id)
  }

  *addSuppressions(tenantId: string, rows: readonly Suppression[]): Work<void> {
    if (rows.length) yield* this.inv.touch(`suppressions:${tenantId}`)
    for (const s of rows) {
      yield* q.run(
        'INSERT INTO suppressions (tenant_id, action, entity_type, value_hash, event_id, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
        [tenantId, s.action, s.entityType, s.valueHash, s.eventId, s.createdMs],
      )
    }
  }

  async suppressions(tenantId: string, limit: number): Promise<Suppression[]> {
    const rows = await this.db.all<{
      action: SuppressionAction
      entity_type: string
      value_hash: string
      event_id: string | null
      created_ms: number
    }>(
      // The spec's audit holds forgets and legit labels; label withdrawals stay in the table (backups).
      `SELECT action, entity_type, value_hash, event_id, created_ms FROM suppressions
        WHERE tenant_id = ? AND action IN ('forget', 'legit')
        ORDER BY created_ms DESC, id DESC LIMIT ?`,
      [tenantId, limit],
    )
    return rows.map((r) => ({
      action: r.action,
      entityType: r.entity_type,
      valueHash: r.value_hash,
      eventId: r.event_id,
      createdMs: Number(r.created_ms),
    }))
  }

  /** Which of these suppression hashes this tenant holds. */
  async suppressed(tenantId: string, hashes: readonly string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set()
    const all = await this.suppressionSet(tenantId)
    return new Set(hashes.filter((h) => all.has(h)))
  }

  /** All of the tenant's suppression hashes (most tenants have none: then no hash needs computing). */
  suppressionSet(tenantId: string): Promise<ReadonlySet<string>> {
    return this.suppressedCache.get(tenantId, async () => {
      const rows = await this.db.all<{ value_hash: string }>(
        'SELECT DISTINCT value_hash FROM suppressions WHERE tenant_id = ?',
        [tenantId],
      )
      return new Set(rows.map((r) => r.value_hash))
    })
  }

  /** Everything of the tenant that holds one of the identifiers, up to `limit` rows per kind. */
  async export(tenantId: string, keys: SubjectKeys, limit: number) {
    const ev = matcher(keys, EVENT_COLS)
    const events = (
      await this.db.all<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = ? AND ${ev.where} ORDER BY created_ms DESC LIMIT ?`,
        [tenantId, ...ev.params, limit],
      )
    ).map(toEventRecord)
    const eventCount = await this.count(
      `SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND ${ev.where}`,
      [tenantId, ...ev.params],
    )
    const hashes = [keys.emailHash, keys.ipHash, keys.phoneHash].filter((h): h is string => h !== undefined)
    const inHashes = hashes.length ? `value_hash IN (${hashes.map(() => '?').join(', ')})` : '1 = 0'
    const lookups = (
      await this.db.all<LookupRow>(
        `SELECT ${LOOKUP_COLUMNS} FROM lookups WHERE tenant_id = ? AND ${inHashes} ORDER BY created_ms DESC LIMIT ?`,
        [tenantId, ...hashes, limit],
      )
    ).map(toLookupRecord)
    const lookupCount = await this.count(
      `SELECT COUNT(*) AS n FROM lookups WHERE tenant_id = ? AND ${inHashes}`,
      [tenantId, ...hashes],
    )
    const le = this.listMatcher(keys)
    const listEntries = await this.db.all<Record<string, unknown>>(
      `SELECT id, list, type, hint, created_ms FROM list_entries WHERE tenant_id = ? AND ${le.where} ORDER BY id DESC LIMIT ?`,
      [tenantId, ...le.params, limit],
    )
    const lb = this.labelMatcher(keys)
    const labels = (
      await this.db.all<LabelRow>(
        `SELECT ${LABEL_COLUMNS} FROM labels
          WHERE tenant_id = ? AND ${lb.where} ORDER BY created_ms DESC LIMIT ?`,
        [tenantId, ...lb.params, limit],
      )
    ).map(toLabel)
    const ob = this.observationMatcher(tenantId, keys)
    const observations = await this.db.all<Record<string, unknown>>(
      `SELECT event_id, created_ms, device_id, resolved_id, rung, ip_prefix, asn, country, connection_type, verdict
         FROM device_observations WHERE tenant_id = ? AND ${ob.where} ORDER BY created_ms DESC LIMIT ?`,
      [tenantId, ...ob.params, limit],
    )
    const observationCount = await this.count(
      `SELECT COUNT(*) AS n FROM device_observations WHERE tenant_id = ? AND ${ob.where}`,
      [tenantId, ...ob.params],
    )
    // The device profile as we hold it: one row per resolved identity the person was seen on.
    const devices = await this.db.all<Record<string, unknown>>(
      `SELECT resolved_id, MIN(created_ms) AS first_seen_ms, MAX(created_ms) AS last_seen_ms, COUNT(*) AS observations,
              COUNT(DISTINCT ip_hash) AS distinct_ips, COUNT(DISTINCT user_id) AS accounts
         FROM device_observations WHERE tenant_id = ? AND ${ob.where} GROUP BY resolved_id ORDER BY MAX(created_ms) DESC LIMIT ?`,
      [tenantId, ...ob.params, limit],
    )
    // Beacons the person's browser sent, matched as erasure matches them (fingerprint or address).
    const bc = matcher(keys, { ipHash: 'ip_hash', deviceId: 'device_id' })
    const beacons = await this.db.all<Record<string, unknown>>(
      `SELECT visit_id, created_ms, device_id, os, browser, mobile, flags, ja4 FROM beacon_observations
        WHERE tenant_id = ? AND ${bc.where} ORDER BY created_ms DESC LIMIT ?`,
      [tenantId, ...bc.params, limit],
    )
    // Responses kept for Idempotency-Key retries that name one of the person's events (sealed: listed,
    // not shown).
    const idempotent = await this.db.all<Record<string, unknown>>(
      `SELECT ie.event_id, ie.key_hash, k.created_ms FROM idempotency_events ie
         JOIN idempotency_keys k ON k.tenant_id = ie.tenant_id AND k.key_hash = ie.key_hash
        WHERE ie.tenant_id = ? AND ie.event_id IN (SELECT id FROM events WHERE tenant_id = ? AND ${ev.where})
        ORDER BY k.created_ms DESC LIMIT ?`,
      [tenantId, tenantId, ...ev.params, limit],
    )
    return {
      idempotent,
      events,
      eventCount,
      lookups,
      lookupCount,
      listEntries,
      labels,
      observations,
      observationCount,
      devices,
      beacons,
    }
  }

  /** Deletes every row of the tenant that holds one of the identifiers; returns counts per kind. */
  *erase(tenantId: string, keys: SubjectKeys): Work<ErasedCounts> {
    // Webhook messages about the person or their events, before the events they name go.
    yield* eraseMessages(
      tenantId,
      matcher(keys, {
        emailHash: 'email_hash',
        ipHash: 'ip_hash',
        phoneHash: 'phone_hash',
        deviceId: 'device_id',
        userId: 'user_id',
      }),
      matcher(keys, EVENT_COLS),
    )
    const lb = this.labelMatcher(keys)
    const labels = yield* q.run(`DELETE FROM labels WHERE tenant_id = ? AND ${lb.where}`, [
      tenantId,
      ...lb.params,
    ])
    const ob = this.observationMatcher(tenantId, keys)
    // The links these observations made go with them (device_links holds user ids and IP hashes).
    yield* eraseLinks(
      tenantId,
      yield* q.all<ObservationLinkSource>(
        `SELECT device_id, token_id, user_id, ip_hash, ip_prefix, rung FROM device_observations WHERE tenant_id = ? AND ${ob.where}`,
        [tenantId, ...ob.params],
      ),
    )
    const deviceRows = yield* q.run(`DELETE FROM device_observations WHERE tenant_id = ? AND ${ob.where}`, [
      tenantId,
      ...ob.params,
    ])
    // Beacons the person's browser sent: by its fingerprint or its address (counted as observations).
    const bc = matcher(keys, { ipHash: 'ip_hash', deviceId: 'device_id' })
    const beacons = yield* q.run(`DELETE FROM beacon_observations WHERE tenant_id = ? AND ${bc.where}`, [
      tenantId,
      ...bc.params,
    ])
    const observations = deviceRows + beacons
    const ev = matcher(keys, EVENT_COLS)
    // IP velocity's pairs of these events are derived again from the events that remain.
    const pairs = yield* ipAccountPairsOf(tenantId, ev.where, ev.params)
    // The stored responses naming these events go first (their links cascade with them).
    const idempotentResponses = yield* q.run(
      `DELETE FROM idempotency_keys WHERE tenant_id = ? AND key_hash IN (
         SELECT key_hash FROM idempotency_events
          WHERE tenant_id = ? AND event_id IN (SELECT id FROM events WHERE tenant_id = ? AND ${ev.where}))`,
      [tenantId, tenantId, tenantId, ...ev.params],
    )
    const events = yield* q.run(`DELETE FROM events WHERE tenant_id = ? AND ${ev.where}`, [
      tenantId,
      ...ev.params,
    ])
    yield* rederiveIpAccounts(tenantId, pairs, { ipHash: keys.ipHash, userId: keys.userId })
    // Counted attributes name the account beside a value's keyed hash: its rows go with it.
    if (keys.userId !== undefined)
      yield* q.run('DELETE FROM attribute_accounts WHERE tenant_id = ? AND account = ?', [
        tenantId,
        keys.userId,
      ])
    const hashes = [keys.emailHash, keys.ipHash, keys.phoneHash].filter((h): h is string => h !== undefined)
    const lookups = hashes.length
      ? yield* q.run(
          `DELETE FROM lookups WHERE tenant_id = ? AND value_hash IN (${hashes.map(() => '?').join(', ')})`,
          [tenantId, ...hashes],
        )
      : 0
    const le = this.listMatcher(keys)
    const listEntries = yield* q.run(`DELETE FROM list_entries WHERE tenant_id = ? AND ${le.where}`, [
      tenantId,
      ...le.params,
    ])
    if (listEntries > 0) yield* this.inv.touch(`lists:${tenantId}`)
    return { events, lookups, listEntries, labels, observations, idempotentResponses }
  }

  /** Observations of the person: their own identifiers, or any of their events. */
  private observationMatcher(tenantId: string, keys: SubjectKeys): { where: string; params: Param[] } {
    const own = matcher(keys, { ipHash: 'ip_hash', deviceId: 'device_id', userId: 'user_id' })
    const ev = matcher(keys, EVENT_COLS)
    return {
      where: `(${own.where} OR event_id IN (SELECT id FROM events WHERE tenant_id = ? AND ${ev.where}))`,
      params: [...own.params, tenantId, ...ev.params],
    }
  }

  private labelMatcher(keys: SubjectKeys) {
    return matcher(keys, LABEL_COLS)
  }

  private listMatcher(keys: SubjectKeys): { where: string; params: Param[] } {
    const parts: string[] = []
    const params: Param[] = []
    const add = (type: string, v: string | undefined) => {
      if (v === undefined) return
      parts.push('(type = ? AND value_key = ?)')
      params.push(type, v)
    }
    add('email', keys.emailHash)
    add('ip', keys.ipHash)
    add('phone', keys.phoneHash)
    add('device', keys.deviceId)
    add('user', keys.userId)
    return { where: parts.length ? `(${parts.join(' OR ')})` : '(1 = 0)', params }
  }

  private async count(sqlText: string, params: Param[]): Promise<number> {
    return Number((await this.db.get<{ n: number }>(sqlText, params))?.n ?? 0)
  }
}
