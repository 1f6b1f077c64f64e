import { type Db, none, type Param, q, together, type Work } from '../engine/db.js'
import { HOUR_MS } from './aggregates.js'
import { ACCOUNT_COUNT_CAP, countIpAccounts, recordIpAccount, trimIpAccounts } from './ip-accounts.js'

/** Earlier events of an account read for takeover: enough to know its devices and countries. */
const ACCOUNT_HISTORY_CAP = 500

import { type EventAttributes, type ScoredEvent, velocityKey } from './scored-event.js'

/** What is stored of a scored event: hashes and coarse attributes, never a raw email, IP or phone. */
export interface EventRecord extends Omit<EventAttributes, 'device' | 'ipBlockHash'> {
  id: string
  createdMs: number
  /** The resolved device identity (token identity or fingerprint-derived), when the event carried a device. */
  resolvedDeviceId: string | null
  score: number
  verdict: string
  reasons: string[]
  /** Fired checks as JSON (codes, weights, messages, evidence numbers). */
  checks: string
}

export interface EventRow {
  id: string
  tenant_id: string
  created_ms: number
  event: string
  user_id: string | null
  device_id: string | null
  resolved_device_id: string | null
  email_hash: string | null
  email_domain: string | null
  ip_hash: string | null
  ip_prefix: string | null
  asn: number | null
  ip_country: string | null
  phone_hash: string | null
  phone_country: string | null
  score: number
  verdict: string
  reasons: string
  checks: string
}

export const EVENT_COLUMNS =
  'id, tenant_id, created_ms, event, user_id, device_id, resolved_device_id, email_hash, email_domain, ip_hash, ip_prefix, asn, ip_country, phone_hash, phone_country, score, verdict, reasons, checks'

export const toEventRecord = (r: EventRow): EventRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  createdMs: Number(r.created_ms),
  event: r.event,
  userId: r.user_id,
  deviceId: r.device_id,
  resolvedDeviceId: r.resolved_device_id,
  emailHash: r.email_hash,
  emailDomain: r.email_domain,
  ipHash: r.ip_hash,
  ipPrefix: r.ip_prefix,
  asn: r.asn === null ? null : Number(r.asn),
  ipCountry: r.ip_country,
  phoneHash: r.phone_hash,
  phoneCountry: r.phone_country,
  score: Number(r.score),
  verdict: r.verdict,
  reasons: JSON.parse(r.reasons) as string[],
  checks: r.checks,
})

export interface EventFilter {
  limit: number
  offset: number
  verdict?: string
  event?: string
  /** Substring of a user id or device fingerprint, case-insensitive. */
  q?: string
  /** Only events this reason code fired on. */
  reason?: string
  /** Only events of exactly this user id. */
  userId?: string
  /** Only events created at or after / before these times. */
  sinceMs?: number
  untilMs?: number
}

const INSERT_EVENT = `INSERT INTO events (${EVENT_COLUMNS}, asn_bad, config_version, rules_version, inputs, shadow_rules, ip_block_hash)
  VALUES (${EVENT_COLUMNS.split(',')
    .map(() => '?')
    .join(', ')}, ?, ?, ?, ?, ?, ?)`

const likeEscape = (s: string) => s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)

export class EventStore {
  constructor(private readonly db: Db) {}

  /**
   * One row per event, plus its IP → account pair for velocity; statistics and ASN rates are counted by
   * the group's counters instead.
   */
  *insert(s: ScoredEvent): Work<void> {
    const a = s.attributes
    const r = s.result
    const ipKey = velocityKey(a)
    yield* together(
      q.run(INSERT_EVENT, [
        s.id,
        a.tenantId,
        s.createdMs,
        a.event,
        a.userId,
        a.deviceId,
        a.device?.resolvedId ?? null,
        a.emailHash,
        a.emailDomain,
        a.ipHash,
        a.ipPrefix,
        a.asn,
        a.ipCountry,
        a.phoneHash,
        a.phoneCountry,
        r.score,
        r.verdict,
        JSON.stringify(r.reasons),
        JSON.stringify(r.checks),
        s.asnBad ? 1 : 0,
        s.decidedBy.configVersion,
        s.decidedBy.rulesVersion,
        JSON.stringify(s.decidedBy.input),
        // The tenant's shadow rules that held: evidence for promoting them, never part of the decision.
        r.shadow ? JSON.stringify(r.shadow) : null,
        a.ipBlockHash,
      ]),
      ipKey !== null && a.userId !== null
        ? recordIpAccount(a.tenantId, ipKey, a.userId, s.createdMs)
        : none(),
    )
  }

  /** Marks a labelled event bad for its ASN's rate; returns the event's ASN and time when it was not already. */
  *markAsnBad(tenantId: string, eventId: string): Work<{ asn: number; createdMs: number } | null> {
    const r = yield* q.get<{ asn: number | null; created_ms: number }>(
      'UPDATE events SET asn_bad = 1 WHERE tenant_id = ? AND id = ? AND asn_bad = 0 RETURNING asn, created_ms',
      [tenantId, eventId],
    )
    return r && r.asn !== null ? { asn: Number(r.asn), createdMs: Number(r.created_ms) } : null
  }

  /** Distinct accounts scored from an IP since `sinceMs`, this event's included (store/events/ip-accounts.ts). */
  *ipAccounts(tenantId: string, ipHash: string, sinceMs: number, userId: string | null): Work<number> {
    return yield* countIpAccounts(tenantId, ipHash, sinceMs, userId)
  }

  /**
   * Distinct accounts with events on a canonical mailbox, `userId` (the event being scored) counted
   * whether or not it was seen before, up to ACCOUNT_COUNT_CAP: one range of the email index, which
   * carries the account (migration 29), read in account order and stopped at the cap, so the table is
   * not read and a very active mailbox costs no more than ACCOUNT_COUNT_CAP distinct accounts.
   */
  *mailboxAccounts(tenantId: string, emailHash: string, userId: string): Work<number> {
    const r = yield* q.get<{ n: number; seen: number | null }>(
      `SELECT COUNT(*) AS n, MAX(CASE WHEN user_id = ? THEN 1 ELSE 0 END) AS seen FROM (
         SELECT DISTINCT user_id FROM events WHERE tenant_id = ? AND email_hash = ? AND user_id IS NOT NULL
          LIMIT ${ACCOUNT_COUNT_CAP}) AS accounts`,
      [userId, tenantId, emailHash],
    )
    const n = Number(r?.n ?? 0)
    return Math.min(ACCOUNT_COUNT_CAP, Number(r?.seen ?? 0) === 1 ? n : n + 1)
  }

  /**
   * An account's earlier allowed events (up to ACCOUNT_HISTORY_CAP of them): how many, the oldest time,
   * and whether the fingerprint / resolved device and the IP country given appeared among them. Only an
   * allowed event vouches for its device and country: a takeover's first login must not make the
   * attacker's device and country "known" for the checkout that follows.
   */
  *accountHistory(
    tenantId: string,
    userId: string,
    device: { fingerprint: string | null; resolvedId: string | null },
    country: string | null,
  ): Work<{ events: number; firstMs: number | null; deviceSeen: boolean; countrySeen: boolean }> {
    const r = yield* q.get<{ n: number; first_ms: number | null; dev: number | null; ctry: number | null }>(
      `SELECT COUNT(*) AS n, MIN(created_ms) AS first_ms,
              MAX(CASE WHEN device_id = ? OR resolved_device_id = ? THEN 1 ELSE 0 END) AS dev,
              MAX(CASE WHEN ip_country = ? THEN 1 ELSE 0 END) AS ctry
         FROM (SELECT created_ms, device_id, resolved_device_id, ip_country FROM events
                WHERE tenant_id = ? AND user_id = ? AND verdict = 'allow' LIMIT ${ACCOUNT_HISTORY_CAP}) AS earlier`,
      [device.fingerprint ?? '', device.resolvedId ?? '', country ?? '', tenantId, userId],
    )
    return {
      events: Number(r?.n ?? 0),
      firstMs: r?.first_ms === null || r?.first_ms === undefined ? null : Number(r.first_ms),
      deviceSeen: Number(r?.dev ?? 0) === 1,
      countrySeen: Number(r?.ctry ?? 0) === 1,
    }
  }

  /** Deletes up to `limit` IP → account pairs last seen before `beforeMs` (the velocity-trim job). */
  expireIpAccounts(beforeMs: number, limit: number): Promise<number> {
    return trimIpAccounts(this.db, beforeMs, limit)
  }

  async get(tenantId: string, id: string): Promise<EventRecord | undefined> {
    const r = await this.db.get<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = ? AND id = ?`,
      [tenantId, id],
    )
    return r ? toEventRecord(r) : undefined
  }

  async list(tenantId: string, f: EventFilter): Promise<{ events: EventRecord[]; total: number }> {
    const where = ['tenant_id = ?']
    const params: Param[] = [tenantId]
    if (f.verdict) {
      where.push('verdict = ?')
      params.push(f.verdict)
    }
    if (f.event) {
      where.push('event = ?')
      params.push(f.event)
    }
    if (f.reason) {
      // Reasons are stored as a JSON array of codes; a quoted code matches one element exactly.
      where.push("reasons LIKE ? ESCAPE '\\'")
      params.push(`%"${likeEscape(f.reason)}"%`)
    }
    if (f.sinceMs !== undefined) {
      where.push('created_ms >= ?')
      params.push(f.sinceMs)
    }
    if (f.untilMs !== undefined) {
      where.push('created_ms < ?')
      params.push(f.untilMs)
    }
    if (f.userId !== undefined) {
      where.push('user_id = ?')
      params.push(f.userId)
    }
    if (f.q) {
      where.push("(LOWER(user_id) LIKE ? ESCAPE '\\' OR LOWER(device_id) LIKE ? ESCAPE '\\')")
      const pattern = `%${likeEscape(f.q)}%`
      params.push(pattern, pattern)
    }
    const w = where.join(' AND ')
    const rows = await this.db.all<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE ${w} ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?`,
      [...params, f.limit, f.offset],
    )
    const total = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM events WHERE ${w}`, params)
    return { events: rows.map(toEventRecord), total: Number(total?.n ?? 0) }
  }

  /**
   * Verdict counts, average scores and top reasons over (sinceMs, untilMs]: whole hours from the hourly
   * rollup, and the partial hours at either edge of the window from the events themselves (at most two
   * hours of one tenant's events), so the figures are exact and the cost does not grow with the window.
   */
  async stats(tenantId: string, sinceMs: number, untilMs: number) {
    const firstFull = Math.floor(sinceMs / HOUR_MS) * HOUR_MS + HOUR_MS
    const endFull = Math.floor((untilMs + 1) / HOUR_MS) * HOUR_MS
    const verdicts = new Map<string, { n: number; sum: number }>()
    const reasons = new Map<string, number>()
    const addVerdict = (v: string, n: number, sum: number) => {
      const x = verdicts.get(v) ?? { n: 0, sum: 0 }
      x.n += n
      x.sum += sum
      verdicts.set(v, x)
    }
    const edges: [number, number][] = []
    if (firstFull < endFull) {
      const rows = await this.db.all<{ verdict: string; reason: string; n: number; s: number }>(
        `SELECT verdict, reason, SUM(n) AS n, SUM(score_sum) AS s FROM event_rollup
          WHERE tenant_id = ? AND hour_ms >= ? AND hour_ms < ? GROUP BY verdict, reason`,
        [tenantId, firstFull, endFull],
      )
      for (const r of rows) {
        if (r.reason === '') addVerdict(r.verdict, Number(r.n), Number(r.s))
        else reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + Number(r.n))
      }
      edges.push([sinceMs, firstFull - 1], [endFull - 1, untilMs])
    } else edges.push([sinceMs, untilMs])
    for (const [from, to] of edges) {
      if (to <= from) continue
      const rows = await this.db.all<{ verdict: string; score: number; reasons: string }>(
        'SELECT verdict, score, reasons FROM events WHERE tenant_id = ? AND created_ms > ? AND created_ms <= ?',
        [tenantId, from, to],
      )
      for (const r of rows) {
        addVerdict(r.verdict, 1, Number(r.score))
        for (const reason of new Set(JSON.parse(r.reasons) as string[])) {
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
        }
      }
    }
    return {
      verdicts: [...verdicts].map(([verdict, v]) => ({ verdict, count: v.n, avgScore: v.sum / v.n })),
      reasons: [...reasons]
        .map(([reason, count]) => ({ reason, count }))
        .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1))
        .slice(0, 10),
    }
  }
}
