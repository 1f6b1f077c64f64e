import { none, type Param, q, together, type Work } from '../engine/db.js'
import { ACCOUNT_COUNT_CAP } from '../events/ip-accounts.js'

/**
 * Device link aggregates: which distinct members (accounts, IP hashes, token identities) each device
 * key has been seen with, plus a counter per key, so device history is read in O(1) however long the
 * history is.
 * - `fa`  fingerprint → accounts          - `fna` fingerprint on a network prefix → accounts
 * - `fi`  fingerprint → IP hashes         - `ta`  token identity → accounts
 * - `ti`  token identity → IP hashes      - `ft`  fingerprint → token identities replayed with it (rung 1)
 * Two markers of a fingerprint (member MARKER), facts about the order of its observations rather than
 * links of one observation (`markersOf` derives them; docs/device-identity.md, "One browser"):
 * - `fx`  two of its token identities alternated: a token was replayed after another identity of the
 *         fingerprint was seen since, which only two browsers at once can show
 * - `fm`  one of its token identities, replayed, carried two or more accounts
 */
export type LinkKind = 'fa' | 'fna' | 'fi' | 'ta' | 'ti' | 'ft' | 'fx' | 'fm'

/** The member of a marker link. */
export const MARKER = '1'

export interface Link {
  kind: LinkKind
  key: string
  member: string
}

const linkInsert = new Map<number, string>()
const linkCount = new Map<number, string>()

/** A link's `last_ms` is moved forward at most once a day, so a known link costs no write on most events. */
const REFRESH_MS = 86_400_000

/**
 * Inserts links; a known one gets its `last_ms` moved to now when it is more than REFRESH_MS old (so
 * `last_ms` trails the link's last observation by less than REFRESH_MS, which retention allows for).
 */
function insertSql(rows: number): string {
  let s = linkInsert.get(rows)
  if (!s) {
    s = `INSERT INTO device_links (tenant_id, kind, key, member, last_ms) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (tenant_id, key, kind, member) DO UPDATE SET last_ms = excluded.last_ms
         WHERE device_links.last_ms < excluded.last_ms - ${REFRESH_MS}`
    linkInsert.set(rows, s)
  }
  return s
}

/** Whether the fingerprint → token link exists already (a primary-key probe). */
const FT_EXISTS = `SELECT 1 AS x FROM device_links WHERE tenant_id = ? AND kind = 'ft' AND key = ? AND member = ?`

/**
 * One statement: per counted key, its distinct members (a primary-key range capped at the cap) and
 * whether the member this event brings is among them.
 */
function countSql(rows: number): string {
  let s = linkCount.get(rows)
  if (!s) {
    s = Array.from(
      { length: rows },
      (_, i) =>
        `SELECT ${i} AS i, COUNT(*) AS n, MAX(CASE WHEN member = ? THEN 1 ELSE 0 END) AS seen FROM (SELECT member FROM device_links WHERE tenant_id = ? AND kind = ? AND key = ? LIMIT ${ACCOUNT_COUNT_CAP}) AS l${i}`,
    ).join(' UNION ALL ')
    linkCount.set(rows, s)
  }
  return s
}

const FT_UPSERT = `INSERT INTO device_link_counts (tenant_id, kind, key, n, last_ms, platform) VALUES (?, 'ft', ?, ?, ?, ?)
  ON CONFLICT (tenant_id, kind, key) DO UPDATE SET n = device_link_counts.n + excluded.n,
    last_ms = excluded.last_ms, platform = COALESCE(excluded.platform, device_link_counts.platform)`

export interface LinkCounts {
  /** For each counted key, its distinct members once this observation's links are in, up to the cap. */
  counts: Map<LinkKind, number>
  /**
   * Writes the observation's links and `extra` ones decided from the counts (markers); run it in the
   * same transaction, before the next observation.
   */
  write: (extra?: readonly Link[]) => Work<void>
}

/**
 * The links of one observation (at most one per kind): reads, for each counted key, how many distinct
 * members it will have with this event's included (up to ACCOUNT_COUNT_CAP), and returns the writes
 * that record them. The read is made before the write and counts this event's member when the key does
 * not have it yet, so it can go out together with the event's other reads, and the write with its other
 * writes (two statements whatever the history, both batched on PostgreSQL). Fingerprint → token links
 * (rung 1 only) also keep a counter, which the collision job reads: it grows when that link is new.
 */
export function* readLinks(r: {
  tenantId: string
  links: readonly Link[]
  counted: readonly { kind: LinkKind; key: string }[]
  nowMs: number
  platform: string | null
}): Work<LinkCounts> {
  const { tenantId, links, counted, nowMs, platform } = r
  const counts = new Map<LinkKind, number>()
  const ft = links.find((l) => l.kind === 'ft')
  const member = (kind: LinkKind) => links.find((l) => l.kind === kind)?.member ?? null
  const p: Param[] = []
  for (const c of counted) p.push(member(c.kind), tenantId, c.kind, c.key)
  const [known, rows] = yield* together(
    ft ? q.get(FT_EXISTS, [tenantId, ft.key, ft.member]) : none(),
    // The device's keys are counted whether or not this event adds a member to them (an event without a
    // user still reports how many accounts the device has).
    counted.length
      ? q.all<{ i: number; n: number; seen: number | null }>(countSql(counted.length), p)
      : none([]),
  )
  for (const row of rows ?? []) {
    const c = counted[Number(row.i)]!
    const n = Number(row.n)
    // Below the cap the range held every member, so `seen` is exact; at the cap the count stays there.
    const adds = n < ACCOUNT_COUNT_CAP && member(c.kind) !== null && Number(row.seen ?? 0) !== 1
    counts.set(c.kind, Math.min(ACCOUNT_COUNT_CAP, adds ? n + 1 : n))
  }
  return {
    counts,
    write: (extra = []) =>
      writeLinks(
        tenantId,
        extra.length ? [...links, ...extra] : links,
        ft && !known ? 1 : 0,
        ft,
        nowMs,
        platform,
      ),
  }
}

function* writeLinks(
  tenantId: string,
  links: readonly Link[],
  added: number,
  ft: Link | undefined,
  nowMs: number,
  platform: string | null,
): Work<void> {
  const params: Param[] = []
  for (const l of links) params.push(tenantId, l.kind, l.key, l.member, nowMs)
  yield* together(
    links.length ? q.run(insertSql(links.length), params) : none(0),
    ft ? q.run(FT_UPSERT, [tenantId, ft.key, added, nowMs, platform]) : none(0),
  )
}

/** Fingerprints seen with a valid token since `sinceMs`, and how many carried 2+ token identities, per platform. */
export const COLLISION_QUERY = `SELECT platform, COUNT(*) AS fingerprints, SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END) AS collided
  FROM device_link_counts WHERE kind = 'ft' AND last_ms > ? GROUP BY platform`

/** The observation columns links are derived from. */
export interface ObservationLinkSource {
  device_id: string | null
  token_id: string
  user_id: string | null
  ip_hash: string | null
  ip_prefix: string | null
  rung: number
}

/** The links one observation makes: every link is derived from observations this way and no other. */
export function linksOf(o: ObservationLinkSource): Link[] {
  const links: Link[] = []
  // A rung-3 event (a fingerprint without a network) makes no fingerprint link: it links nothing.
  const fp = Number(o.rung) === 3 ? null : o.device_id
  if (fp !== null && o.user_id !== null) links.push({ kind: 'fa', key: fp, member: o.user_id })
  if (fp !== null && o.ip_prefix !== null && o.user_id !== null)
    links.push({ kind: 'fna', key: `${fp}|${o.ip_prefix}`, member: o.user_id })
  if (fp !== null && o.ip_hash !== null) links.push({ kind: 'fi', key: fp, member: o.ip_hash })
  if (o.user_id !== null) links.push({ kind: 'ta', key: o.token_id, member: o.user_id })
  if (o.ip_hash !== null) links.push({ kind: 'ti', key: o.token_id, member: o.ip_hash })
  if (fp !== null && Number(o.rung) === 1) links.push({ kind: 'ft', key: fp, member: o.token_id })
  return links
}

/**
 * The markers an observation adds to its fingerprint (rung 1 only: a replayed token). `previousToken` is
 * the token identity of the fingerprint's latest earlier observation at rung 1 or 2 (null without one),
 * `tokenAccounts` the replayed identity's accounts with this observation's. A marker seen again is
 * written again, so its `last_ms` follows its latest evidence the way a link's follows its latest
 * observation (retention). Scoring and the recount tests derive markers only through this function.
 */
export function markersOf(o: {
  fingerprint: string | null
  rung: number
  token: string
  previousToken: string | null
  tokenAccounts: number
}): Link[] {
  if (o.fingerprint === null || Number(o.rung) !== 1) return []
  const out: Link[] = []
  if (o.previousToken !== null && o.previousToken !== o.token)
    out.push({ kind: 'fx', key: o.fingerprint, member: MARKER })
  if (o.tokenAccounts >= 2) out.push({ kind: 'fm', key: o.fingerprint, member: MARKER })
  return out
}

/** Sets a fingerprint's token counter to the fingerprint → token links that remain; removes it at zero. */
function* recountTokens(tenantId: string, fp: string): Work<void> {
  yield* q.run(
    `UPDATE device_link_counts SET n = (SELECT COUNT(*) FROM device_links l
          WHERE l.tenant_id = ? AND l.kind = 'ft' AND l.key = ?)
        WHERE tenant_id = ? AND kind = 'ft' AND key = ?`,
    [tenantId, fp, tenantId, fp],
  )
  yield* q.run("DELETE FROM device_link_counts WHERE tenant_id = ? AND kind = 'ft' AND key = ? AND n = 0", [
    tenantId,
    fp,
  ])
}

/**
 * Erasure: removes every link the erased observations made (by primary key), and brings the
 * fingerprint → token counters back in line with the links that remain. A link that other, remaining
 * observations also made goes too: erasure errs on the side of forgetting.
 */
export function* eraseLinks(tenantId: string, observations: readonly ObservationLinkSource[]): Work<number> {
  const seen = new Set<string>()
  const fingerprints = new Set<string>()
  const markers = new Set<string>()
  let deleted = 0
  for (const o of observations) {
    // The fingerprint's markers were read from the order of its observations: they go with any of them.
    if (o.device_id !== null && Number(o.rung) !== 3) markers.add(o.device_id)
    for (const l of linksOf(o)) {
      const k = `${l.kind}\u0000${l.key}\u0000${l.member}`
      if (seen.has(k)) continue
      seen.add(k)
      if (l.kind === 'ft') fingerprints.add(l.key)
      deleted += yield* q.run(
        'DELETE FROM device_links WHERE tenant_id = ? AND kind = ? AND key = ? AND member = ?',
        [tenantId, l.kind, l.key, l.member],
      )
    }
  }
  for (const fp of markers) {
    deleted += yield* q.run(
      "DELETE FROM device_links WHERE tenant_id = ? AND kind IN ('fx', 'fm') AND key = ?",
      [tenantId, fp],
    )
  }
  for (const fp of fingerprints) {
    yield* recountTokens(tenantId, fp)
  }
  return deleted
}

// ---- Retention of device links (jobs/retention.ts) -------------------------------------------------

/**
 * Deletes up to `batch` of the tenant's links whose last observation is older than `cutoffMs`, and brings
 * the fingerprint → token counters of the fingerprints that lost links back in line (a counter left at
 * zero goes). Observations older than the cutoff are deleted with their events, so what a device was
 * seen with then no longer counts either. A link's `last_ms` trails its last observation by less than
 * REFRESH_MS, so only links with `last_ms + REFRESH_MS <= cutoffMs` are certainly past it: a link can
 * outlive its last observation by up to a day, never the other way round. Returns how many links went.
 */
export function* trimLinks(tenantId: string, cutoffMs: number, batch: number): Work<number> {
  const gone = yield* q.all<{ kind: string; key: string }>(
    `DELETE FROM device_links WHERE tenant_id = ? AND (key, kind, member) IN (
       SELECT key, kind, member FROM device_links WHERE tenant_id = ? AND last_ms <= ?
        ORDER BY last_ms LIMIT ?)
     RETURNING kind, key`,
    [tenantId, tenantId, cutoffMs - REFRESH_MS, batch],
  )
  const fingerprints = new Set(gone.filter((l) => l.kind === 'ft').map((l) => l.key))
  for (const fp of fingerprints) {
    yield* recountTokens(tenantId, fp)
  }
  return gone.length
}
