import type { AttributeCounts } from '../../scoring/rules/facts.js'
import { type Db, q, type Work } from '../engine/db.js'

/**
 * Counted attributes' aggregates (docs/rules.md, "Hashed and counted attributes"): per tenant,
 * attribute and keyed hash of a value, the accounts seen with it (one row per account, its last time)
 * and its events per minute. A read is then bounded ranges of one value's rows, never a scan of events;
 * nothing older than a day is ever counted, and the `velocity-trim` job deletes it.
 */

export const ATTRIBUTE_WINDOWS = { '10m': 600_000, '1h': 3_600_000, '24h': 86_400_000 } as const
const DAY = ATTRIBUTE_WINDOWS['24h']
/** Kept a little past the longest window for clocks that step back. */
export const ATTRIBUTE_COUNTS_KEEP_MS = DAY + 3_600_000
/** Distinct accounts are counted up to this many per value (card testing shows far fewer per day). */
export const ATTRIBUTE_ACCOUNT_CAP = 1000

const minuteOf = (ms: number) => Math.floor(ms / 60_000) * 60_000

export class AttributeCountStore {
  constructor(private readonly db: Db) {}

  /**
   * The value's counts at `nowMs`, this event included: its account (when it has one) whether or not
   * seen before, and one event. Event windows go by the minute.
   */
  *read(
    tenantId: string,
    attribute: string,
    valueHash: string,
    account: string | null,
    nowMs: number,
  ): Work<AttributeCounts> {
    const [w10, w1h] = [nowMs - ATTRIBUTE_WINDOWS['10m'], nowMs - ATTRIBUTE_WINDOWS['1h']]
    const acc = yield* q.all<{ account: string; last_ms: number }>(
      `SELECT account, last_ms FROM attribute_accounts
        WHERE tenant_id = ? AND attribute = ? AND value_hash = ? AND last_ms > ?
        ORDER BY last_ms DESC LIMIT ${ATTRIBUTE_ACCOUNT_CAP}`,
      [tenantId, attribute, valueHash, nowMs - DAY],
    )
    const since = (from: number) =>
      acc.filter((r) => Number(r.last_ms) > from && r.account !== account).length + (account === null ? 0 : 1)
    const ev = yield* q.all<{ minute_ms: number; n: number }>(
      `SELECT minute_ms, n FROM attribute_events
        WHERE tenant_id = ? AND attribute = ? AND value_hash = ? AND minute_ms > ?`,
      [tenantId, attribute, valueHash, minuteOf(nowMs) - DAY],
    )
    const events = (from: number) =>
      ev.filter((r) => Number(r.minute_ms) > minuteOf(from)).reduce((s, r) => s + Number(r.n), 0) + 1
    const cap = (n: number) => Math.min(ATTRIBUTE_ACCOUNT_CAP, n)
    return {
      accounts_10m: cap(since(w10)),
      accounts_1h: cap(since(w1h)),
      accounts_24h: cap(since(nowMs - DAY)),
      events_10m: events(w10),
      events_1h: events(w1h),
      events_24h: events(nowMs - DAY),
    }
  }

  /** Records one event with the value (and its account), in the event's transaction. */
  *record(
    tenantId: string,
    attribute: string,
    valueHash: string,
    account: string | null,
    nowMs: number,
  ): Work<void> {
    if (account !== null) {
      yield* q.run(
        `INSERT INTO attribute_accounts (tenant_id, attribute, value_hash, account, last_ms) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, attribute, value_hash, account) DO UPDATE SET last_ms = excluded.last_ms
         WHERE attribute_accounts.last_ms < excluded.last_ms`,
        [tenantId, attribute, valueHash, account, nowMs],
      )
    }
    yield* q.run(
      `INSERT INTO attribute_events (tenant_id, attribute, value_hash, minute_ms, n) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (tenant_id, attribute, value_hash, minute_ms) DO UPDATE SET n = attribute_events.n + 1`,
      [tenantId, attribute, valueHash, minuteOf(nowMs)],
    )
  }

  /** Deletes up to `limit` rows of each table older than `beforeMs`; returns how many went. */
  async expire(beforeMs: number, limit: number): Promise<number> {
    const a = await this.db.run(
      `DELETE FROM attribute_accounts WHERE (tenant_id, attribute, value_hash, account) IN (
         SELECT tenant_id, attribute, value_hash, account FROM attribute_accounts WHERE last_ms < ? LIMIT ?)`,
      [beforeMs, limit],
    )
    const e = await this.db.run(
      `DELETE FROM attribute_events WHERE (tenant_id, attribute, value_hash, minute_ms) IN (
         SELECT tenant_id, attribute, value_hash, minute_ms FROM attribute_events WHERE minute_ms < ? LIMIT ?)`,
      [beforeMs, limit],
    )
    return Math.max(a, e)
  }
}
