import { type Db, none, q, together, type Work } from '../engine/db.js'
import { HOUR_MS } from './aggregates.js'
import { packJson } from './compact-json.js'
import { type EventPage, listEventPage } from './event-listing.js'
import {
  EVENT_COLUMNS,
  type EventFilter,
  type EventRecord,
  type EventRow,
  toEventRecord,
} from './event-row.js'
import { ACCOUNT_COUNT_CAP, countIpAccounts, recordIpAccount, trimIpAccounts } from './ip-accounts.js'
import { type ReasonSpan, reasonHours } from './reason-hours.js'
import { type ScoredEvent, velocityKey } from './scored-event.js'

/** Earlier events of an account read for takeover: enough to know its devices and countries. */
const ACCOUNT_HISTORY_CAP = 500

export { EVENT_COLUMNS, type EventFilter, type EventRecord, type EventRow, toEventRecord }

// The scoring reads' texts are built once: the engines find their prepared statement by the text, and a
// text built per call is hashed again each time (1.5-3.5 µs at these lengths, twice per event).
const MAILBOX_ACCOUNTS = `SELECT COUNT(*) AS n, MAX(CASE WHEN user_id = ? THEN 1 ELSE 0 END) AS seen, NULL AS on_fp FROM (
    SELECT DISTINCT user_id FROM events WHERE tenant_id = ? AND email_hash = ? AND user_id IS NOT NULL
     LIMIT ${ACCOUNT_COUNT_CAP}) AS accounts`
const MAILBOX_ACCOUNTS_ON_FINGERPRINT = `SELECT COUNT(*) AS n, MAX(CASE WHEN user_id = ? THEN 1 ELSE 0 END) AS seen,
    SUM(CASE WHEN user_id <> ? AND EXISTS (SELECT 1 FROM device_links l WHERE l.tenant_id = ? AND l.kind = 'fa'
      AND l.key = ? AND l.member = accounts.user_id) THEN 1 ELSE 0 END) AS on_fp FROM (
    SELECT DISTINCT user_id FROM events WHERE tenant_id = ? AND email_hash = ? AND user_id IS NOT NULL
     LIMIT ${ACCOUNT_COUNT_CAP}) AS accounts`
const ACCOUNT_HISTORY = `SELECT COUNT(*) AS n, MIN(created_ms) AS first_ms,
    MAX(CASE WHEN device_id = ? OR resolved_device_id = ? THEN 1 ELSE 0 END) AS dev,
    MAX(CASE WHEN ip_country = ? THEN 1 ELSE 0 END) AS ctry
  FROM (SELECT created_ms, device_id, resolved_device_id, ip_country FROM events
         WHERE tenant_id = ? AND user_id = ? AND verdict = 'allow' LIMIT ${ACCOUNT_HISTORY_CAP}) AS earlier`

const INSERT_EVENT = `INSERT INTO events (${EVENT_COLUMNS}, asn_bad, config_version, rules_version, inputs, shadow_rules, ip_block_hash)
  VALUES (${EVENT_COLUMNS.split(',')
    .map(() => '?')
    .join(', ')}, ?, ?, ?, ?, ?, ?)`

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
        // The checks and the engine input in their compact form (compact-json.ts): about half the bytes.
        packJson(r.checks),
        s.asnBad ? 1 : 0,
        s.decidedBy.configVersion,
        s.decidedBy.rulesVersion,
        packJson(s.decidedBy.input),
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
   *
   * With a `fingerprint` (an event linked at rung 1 or 2), also how many of those accounts the
   * fingerprint has been seen with (its `fa` device links, one primary-key probe per account), this one
   * included: the accounts one person made with aliases of one mailbox on a device of that fingerprint
   * (docs/device-identity.md). Null without a fingerprint.
   */
  *mailboxAccounts(
    tenantId: string,
    emailHash: string,
    userId: string,
    fingerprint: string | null = null,
  ): Work<{ accounts: number; onFingerprint: number | null }> {
    const r = yield* q.get<{ n: number; seen: number | null; on_fp: number | null }>(
      fingerprint === null ? MAILBOX_ACCOUNTS : MAILBOX_ACCOUNTS_ON_FINGERPRINT,
      fingerprint === null
        ? [userId, tenantId, emailHash]
        : [userId, userId, tenantId, fingerprint, tenantId, emailHash],
    )
    const n = Number(r?.n ?? 0)
    const accounts = Math.min(ACCOUNT_COUNT_CAP, Number(r?.seen ?? 0) === 1 ? n : n + 1)
    // This event links its own account to the fingerprint, so it counts whatever was recorded before.
    const onFingerprint = fingerprint === null ? null : Math.min(ACCOUNT_COUNT_CAP, Number(r?.on_fp ?? 0) + 1)
    return { accounts, onFingerprint }
  }

  /**
   * An account's earlier allowed events (up to ACCOUNT_HISTORY_CAP of them): how many, the oldest time,
   * and whether the fingerprint / resolved device and the IP country given appeared among them. Only an
   * allowed event vouches for its device and country: a takeover's first login must not make the
   * attacker's device and country "known" for the checkout that follows. One range of the user index,
   * which carries every column read here (migration 32), so no table row is fetched; the range is in
   * time order, so the cap keeps the oldest events, and no ORDER BY asks for a sort past the cap.
   */
  *accountHistory(
    tenantId: string,
    userId: string,
    device: { fingerprint: string | null; resolvedId: string | null },
    country: string | null,
  ): Work<{ events: number; firstMs: number | null; deviceSeen: boolean; countrySeen: boolean }> {
    const r = yield* q.get<{ n: number; first_ms: number | null; dev: number | null; ctry: number | null }>(
      ACCOUNT_HISTORY,
      [device.fingerprint ?? '', device.resolvedId ?? '', country ?? '', tenantId, userId],
    )
    return {
      events: Number(r?.n ?? 0),
      firstMs: r?.first_ms === null || r?.first_ms === undefined ? null : Number(r.first_ms),
      deviceSeen: Number(r?.dev ?? 0) === 1,
      countrySeen: Number(r?.ctry ?? 0) === 1,
    }
  }

  /** Firings of `reason` on the tenant's events in recent hours and the same hours of earlier days (reason-hours.ts). */
  *reasonHours(
    tenantId: string,
    reason: string,
    fromMs: number,
    hours: number,
    days: number,
  ): Work<{ recent: ReasonSpan; sameHours: ReasonSpan[] }> {
    return yield* reasonHours(tenantId, reason, fromMs, hours, days)
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

  /** One page of events, newest first, with a bounded count (store/events/event-listing.ts). */
  list(tenantId: string, f: EventFilter): Promise<EventPage> {
    return listEventPage(this.db, tenantId, f)
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
