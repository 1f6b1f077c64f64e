import { type Param, q, type Work } from './db.js'
import { ACCOUNT_COUNT_CAP } from './events.js'

/**
 * Device link aggregates: which distinct members (accounts, IP hashes, token identities) each device
 * key has been seen with, plus a counter per key, so device history is read in O(1) however long the
 * history is.
 * - `fa`  fingerprint → accounts          - `fna` fingerprint on a network prefix → accounts
 * - `fi`  fingerprint → IP hashes         - `ta`  token identity → accounts
 * - `ti`  token identity → IP hashes      - `ft`  fingerprint → token identities replayed with it (rung 1)
 */
export type LinkKind = 'fa' | 'fna' | 'fi' | 'ta' | 'ti' | 'ft'

export interface Link {
  kind: LinkKind
  key: string
  member: string
}

const linkInsert = new Map<number, string>()
const linkCount = new Map<number, string>()

function insertSql(rows: number): string {
  let s = linkInsert.get(rows)
  if (!s) {
    s = `INSERT INTO device_links (tenant_id, kind, key, member) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}
         ON CONFLICT DO NOTHING`
    linkInsert.set(rows, s)
  }
  return s
}

/** One statement: per link kind, its key's distinct members, each a primary-key range capped at the cap. */
function countSql(rows: number): string {
  let s = linkCount.get(rows)
  if (!s) {
    s = Array.from(
      { length: rows },
      (_, i) =>
        `SELECT ${i} AS i, COUNT(*) AS n FROM (SELECT 1 AS x FROM device_links WHERE tenant_id = ? AND kind = ? AND key = ? LIMIT ${ACCOUNT_COUNT_CAP}) AS l${i}`,
    ).join(' UNION ALL ')
    linkCount.set(rows, s)
  }
  return s
}

const FT_UPSERT = `INSERT INTO device_link_counts (tenant_id, kind, key, n, last_ms, platform) VALUES (?, 'ft', ?, ?, ?, ?)
  ON CONFLICT (tenant_id, kind, key) DO UPDATE SET n = device_link_counts.n + excluded.n,
    last_ms = excluded.last_ms, platform = COALESCE(excluded.platform, device_link_counts.platform)`

/**
 * Records the links of one observation (at most one per kind) and returns, for each counted key, how
 * many distinct members it has now, this event's included, up to ACCOUNT_COUNT_CAP. Two statements whatever the history:
 * an insert that ignores known links, and one read of bounded primary-key ranges. Fingerprint → token
 * links (rung 1 only) also keep a counter, which the collision job reads.
 */
export function* recordLinks(r: {
  tenantId: string
  links: readonly Link[]
  counted: readonly { kind: LinkKind; key: string }[]
  nowMs: number
  platform: string | null
}): Work<Map<LinkKind, number>> {
  const { tenantId, links, counted, nowMs, platform } = r
  const counts = new Map<LinkKind, number>()
  const ft = links.find((l) => l.kind === 'ft')
  const plain = ft ? links.filter((l) => l !== ft) : links
  if (plain.length) {
    const params: Param[] = []
    for (const l of plain) params.push(tenantId, l.kind, l.key, l.member)
    yield* q.run(insertSql(plain.length), params)
  }
  if (ft) {
    // Inserted on its own so its counter learns whether the fingerprint gained a token identity.
    const added = yield* q.run(insertSql(1), [tenantId, ft.kind, ft.key, ft.member])
    yield* q.run(FT_UPSERT, [tenantId, ft.key, added, nowMs, platform])
  }
  // The device's keys are counted whether or not this event adds a member to them (an event without a
  // user still reports how many accounts the device has).
  if (counted.length === 0) return counts
  const p: Param[] = []
  for (const c of counted) p.push(tenantId, c.kind, c.key)
  for (const r of yield* q.all<{ i: number; n: number }>(countSql(counted.length), p)) {
    counts.set(counted[Number(r.i)]!.kind, Number(r.n))
  }
  return counts
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
 * Erasure: removes every link the erased observations made (by primary key), and brings the
 * fingerprint → token counters back in line with the links that remain. A link that other, remaining
 * observations also made goes too: erasure errs on the side of forgetting.
 */
export function* eraseLinks(tenantId: string, observations: readonly ObservationLinkSource[]): Work<number> {
  const seen = new Set<string>()
  const fingerprints = new Set<string>()
  let deleted = 0
  for (const o of observations) {
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
  for (const fp of fingerprints) {
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
  return deleted
}
