import { type Db, type Param, q, type Work } from '../engine/db.js'

/**
 * IP velocity's aggregate: one row per tenant, IP hash and account, holding when that account was last
 * scored from that IP. The velocity read is then a range of the IP's rows newer than the window, stopped
 * at the cap, however much history the IP or the tenant has (a DISTINCT over events could not stop early
 * on PostgreSQL, and the planner was free to walk the tenant's events by user instead).
 * Rows older than the window can never be counted again: the `velocity-trim` job deletes them, so the
 * table holds about an hour of pairs. The `ip_hash` column holds the velocity key (scored-event.ts
 * `velocityKey`): the IPv4 address's hash, or the hash of the IPv6 address's /64 (`events.ip_block_hash`).
 */

/** Kept past the window for clocks that step back a little; the read itself is bounded by the window. */
export const IP_ACCOUNTS_KEEP_MS = 3_600_000

/** History counts (here and in store/devices/links.ts) stop here; config thresholds are bounded to 0-100. */
export const ACCOUNT_COUNT_CAP = 100

const UPSERT = `INSERT INTO ip_accounts (tenant_id, ip_hash, user_id, last_ms) VALUES (?, ?, ?, ?)
  ON CONFLICT (tenant_id, ip_hash, user_id) DO UPDATE SET last_ms = excluded.last_ms
  WHERE ip_accounts.last_ms < excluded.last_ms`

const COUNT = `SELECT COUNT(*) AS n, MAX(CASE WHEN user_id = ? THEN 1 ELSE 0 END) AS seen FROM (
    SELECT user_id FROM ip_accounts WHERE tenant_id = ? AND ip_hash = ? AND last_ms > ?
     LIMIT ${ACCOUNT_COUNT_CAP}) AS recent`

/** Called with every recorded event that has both an IP and an account, in the event's transaction. */
export function* recordIpAccount(
  tenantId: string,
  ipHash: string,
  userId: string,
  nowMs: number,
): Work<void> {
  yield* q.run(UPSERT, [tenantId, ipHash, userId, nowMs])
}

/**
 * Distinct accounts scored from the IP since `sinceMs`, counting `userId` (the event being scored)
 * whether or not it was seen before, up to ACCOUNT_COUNT_CAP: one bounded index range.
 */
export function* countIpAccounts(
  tenantId: string,
  ipHash: string,
  sinceMs: number,
  userId: string | null,
): Work<number> {
  const r = yield* q.get<{ n: number; seen: number | null }>(COUNT, [userId ?? '', tenantId, ipHash, sinceMs])
  const n = Number(r?.n ?? 0)
  return Math.min(ACCOUNT_COUNT_CAP, userId !== null && Number(r?.seen ?? 0) !== 1 ? n + 1 : n)
}

/**
 * Erasure: the pairs of the events about to be deleted are read first (`pairsOf`), then, once the events
 * are gone, each pair is derived again from the events that remain (`rederive`). Rows naming the
 * subject's own account or IP go whatever remains.
 */
export function* ipAccountPairsOf(
  tenantId: string,
  eventWhere: string,
  params: readonly Param[],
): Work<{ ip_hash: string; user_id: string }[]> {
  return yield* q.all<{ ip_hash: string; user_id: string }>(
    `SELECT DISTINCT COALESCE(ip_block_hash, ip_hash) AS ip_hash, user_id FROM events
      WHERE tenant_id = ? AND ip_hash IS NOT NULL AND user_id IS NOT NULL AND ${eventWhere}`,
    [tenantId, ...params],
  )
}

export function* rederiveIpAccounts(
  tenantId: string,
  pairs: readonly { ip_hash: string; user_id: string }[],
  subject: { ipHash?: string | undefined; userId?: string | undefined },
): Work<void> {
  // Pairs of the subject's own IP or account are not derived again: the deletes below remove them all.
  const others = pairs.filter((p) => p.ip_hash !== subject.ipHash && p.user_id !== subject.userId)
  for (const p of others) {
    yield* q.run('DELETE FROM ip_accounts WHERE tenant_id = ? AND ip_hash = ? AND user_id = ?', [
      tenantId,
      p.ip_hash,
      p.user_id,
    ])
    // An IPv4 key is the address's hash (read through the IP index); an IPv6 key is its /64's, read
    // through the account's events (the user index), since no index leads with the block.
    yield* q.run(
      `INSERT INTO ip_accounts (tenant_id, ip_hash, user_id, last_ms)
       SELECT tenant_id, ?, user_id, MAX(created_ms) FROM events
        WHERE tenant_id = ? AND user_id = ? AND (ip_hash = ? OR ip_block_hash = ?)
        GROUP BY tenant_id, user_id`,
      [p.ip_hash, tenantId, p.user_id, p.ip_hash, p.ip_hash],
    )
  }
  if (subject.ipHash !== undefined)
    yield* q.run('DELETE FROM ip_accounts WHERE tenant_id = ? AND ip_hash = ?', [tenantId, subject.ipHash])
  if (subject.userId !== undefined)
    yield* q.run('DELETE FROM ip_accounts WHERE tenant_id = ? AND user_id = ?', [tenantId, subject.userId])
}

/** Deletes up to `limit` rows last seen before `beforeMs`; returns how many. */
export function trimIpAccounts(db: Db, beforeMs: number, limit: number): Promise<number> {
  return db.run(
    `DELETE FROM ip_accounts WHERE (tenant_id, ip_hash, user_id) IN (
       SELECT tenant_id, ip_hash, user_id FROM ip_accounts WHERE last_ms < ? LIMIT ?)`,
    [beforeMs, limit],
  )
}
