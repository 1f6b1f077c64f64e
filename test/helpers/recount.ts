import { REASONS } from '../../src/scoring/reasons.js'
import { type Link, markersOf } from '../../src/store/devices/links.js'
import { unpackJson } from '../../src/store/events/compact-json.js'

/**
 * Brute-force recounts over raw rows, written independently of the store's aggregate code: the
 * aggregate tests compare what the store maintains incrementally with these.
 */

export const HOUR = 3600_000
export const DAY = 24 * HOUR

/** A small deterministic PRNG (mulberry32), so a failing stream can be replayed from its seed. */
export function seeded(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
  }
}

export interface ObservationRow {
  id: number
  event_id: string
  created_ms: number
  device_id: string | null
  token_id: string
  rung: number
  user_id: string | null
  ip_hash: string | null
  ip_prefix: string | null
}

export interface EventRow {
  id: string
  created_ms: number
  verdict: string
  score: number
  reasons: string
  checks: string
  asn: number | null
  asn_bad: number
  ip_hash: string | null
  /** IPv6: its /64's hash, what velocity counts under (null for IPv4). */
  ip_block_hash: string | null
  user_id: string | null
  /** The recorded engine input (compact JSON): holds the IP account count the event was scored with. */
  inputs: string | null
}

const distinct = <T>(xs: readonly T[]) => new Set(xs).size

/** Every (kind, key, member) the observations imply, by the definitions of the link kinds. */
export function linkTriples(obs: readonly ObservationRow[]): Set<string> {
  const out = new Set<string>()
  const add = (kind: string, key: string, member: string) => out.add(`${kind}|${key}|${member}`)
  for (const o of obs) {
    // A rung-3 observation (a fingerprint without a network) links nothing on its fingerprint.
    const fp = Number(o.rung) === 3 ? null : o.device_id
    if (fp !== null && o.user_id !== null) add('fa', fp, o.user_id)
    if (fp !== null && o.user_id !== null && o.ip_prefix !== null)
      add('fna', `${fp}|${o.ip_prefix}`, o.user_id)
    if (fp !== null && o.ip_hash !== null) add('fi', fp, o.ip_hash)
    if (o.user_id !== null) add('ta', o.token_id, o.user_id)
    if (o.ip_hash !== null) add('ti', o.token_id, o.ip_hash)
    if (fp !== null && Number(o.rung) === 1) add('ft', fp, o.token_id)
  }
  for (const m of fingerprintMarkers(obs)) add(m.kind, m.key, m.member)
  return out
}

/**
 * The fingerprints' markers, replayed from the observations in time order: each rung-1 observation
 * against its fingerprint's previous observation at rung 1 or 2 and its token's accounts so far.
 */
export function fingerprintMarkers(obs: readonly ObservationRow[]): Link[] {
  const ordered = [...obs].sort(
    (a, b) => Number(a.created_ms) - Number(b.created_ms) || Number(a.id) - Number(b.id),
  )
  const previous = new Map<string, string>()
  const accounts = new Map<string, Set<string>>()
  const out: Link[] = []
  for (const o of ordered) {
    const fp = Number(o.rung) === 3 ? null : o.device_id
    const own = accounts.get(o.token_id) ?? new Set<string>()
    if (o.user_id !== null) own.add(o.user_id)
    accounts.set(o.token_id, own)
    if (fp === null) continue
    out.push(
      ...markersOf({
        fingerprint: fp,
        rung: Number(o.rung),
        token: o.token_id,
        previousToken: previous.get(fp) ?? null,
        tokenAccounts: own.size,
      }),
    )
    previous.set(fp, o.token_id)
  }
  return out
}

/** Per key of each kind: how many distinct members the observations give it. */
export function linkCounts(
  obs: readonly ObservationRow[],
): Map<string, { kind: string; key: string; n: number }> {
  const members = new Map<string, { kind: string; key: string; set: Set<string> }>()
  for (const triple of linkTriples(obs)) {
    const [kind, ...rest] = triple.split('|')
    const member = rest.pop()!
    const key = rest.join('|')
    const k = `${kind}|${key}`
    const m = members.get(k) ?? { kind: kind!, key, set: new Set<string>() }
    m.set.add(member)
    members.set(k, m)
  }
  return new Map([...members].map(([k, m]) => [k, { kind: m.kind, key: m.key, n: m.set.size }]))
}

/** Fingerprint → distinct token identities replayed with it (rung 1), and when it last was. */
export function fingerprintTokens(
  obs: readonly ObservationRow[],
): Map<string, { n: number; lastMs: number }> {
  const by = new Map<string, { tokens: Set<string>; lastMs: number }>()
  for (const o of obs) {
    if (o.device_id === null || Number(o.rung) !== 1) continue
    const x = by.get(o.device_id) ?? { tokens: new Set<string>(), lastMs: 0 }
    x.tokens.add(o.token_id)
    x.lastMs = Math.max(x.lastMs, Number(o.created_ms))
    by.set(o.device_id, x)
  }
  return new Map([...by].map(([fp, x]) => [fp, { n: x.tokens.size, lastMs: x.lastMs }]))
}

/** What the device profile of the observation `at` should say, counted over it and every earlier one. */
export function profileFigures(obs: readonly ObservationRow[], at: ObservationRow) {
  const upTo = obs.filter((o) => Number(o.id) <= Number(at.id))
  const users = (rows: ObservationRow[]) => distinct(rows.map((o) => o.user_id).filter((u) => u !== null))
  const ips = (rows: ObservationRow[]) => distinct(rows.map((o) => o.ip_hash).filter((i) => i !== null))
  const rung = Number(at.rung)
  // Rung 3 links nothing: only the event itself counts.
  if (rung === 3)
    return {
      account_count: at.user_id === null ? 0 : 1,
      account_count_same_network: 0,
      distinct_ips: at.ip_hash === null ? 0 : 1,
    }
  const fp = at.device_id
  const byFp = fp === null ? [] : upTo.filter((o) => o.device_id === fp && Number(o.rung) !== 3)
  const byToken = upTo.filter((o) => o.token_id === at.token_id)
  return {
    account_count: fp !== null ? users(byFp) : users(byToken),
    account_count_same_network:
      fp !== null && at.ip_prefix !== null ? users(byFp.filter((o) => o.ip_prefix === at.ip_prefix)) : 0,
    distinct_ips: rung === 2 ? ips(byFp) : ips(byToken),
  }
}

/** event_rollup rows: per hour and verdict the '' row (count, score sum) and one row per reason. */
export function rollup(events: readonly EventRow[]): Map<string, { n: number; sum: number }> {
  const out = new Map<string, { n: number; sum: number }>()
  const add = (k: string, sum: number) => {
    const x = out.get(k) ?? { n: 0, sum: 0 }
    x.n++
    x.sum += sum
    out.set(k, x)
  }
  for (const e of events) {
    const hour = Math.floor(Number(e.created_ms) / HOUR) * HOUR
    add(`${hour}|${e.verdict}|`, Number(e.score))
    for (const r of new Set(JSON.parse(e.reasons) as string[])) add(`${hour}|${e.verdict}|${r}`, 0)
  }
  return out
}

/** asn_daily rows: per UTC day and ASN, events and events marked bad. */
export function asnDays(events: readonly EventRow[]): Map<string, { events: number; bad: number }> {
  const out = new Map<string, { events: number; bad: number }>()
  for (const e of events) {
    if (e.asn === null) continue
    const k = `${Math.floor(Number(e.created_ms) / DAY) * DAY}|${Number(e.asn)}`
    const x = out.get(k) ?? { events: 0, bad: 0 }
    x.events++
    x.bad += Number(e.asn_bad)
    out.set(k, x)
  }
  return out
}

/**
 * An event's score without its network-derived and list checks decides whether it is bad for its ASN.
 * Those are the registry's codes of the network and lists families, read from the registry itself.
 */
const NOT_CORE = new Set(
  REASONS.filter((r) => r.family === 'network' || r.family === 'lists').map((r) => r.code as string),
)
export function coreScore(checks: string): number {
  let s = 0
  for (const c of unpackJson<{ reason: string; weight: number }[]>(checks)) {
    if (NOT_CORE.has(c.reason)) continue
    s += c.weight
  }
  return Math.min(100, s)
}

const round2 = (x: number) => Math.round(x * 100) / 100

/** GET /v1/stats over (to - hours, to], counted from the events themselves. */
export function stats(events: readonly EventRow[], to: number, hours: number) {
  const from = to - hours * HOUR
  const inside = events.filter((e) => Number(e.created_ms) > from && Number(e.created_ms) <= to)
  const verdicts: Record<string, { count: number; avgScore: number | null }> = {}
  for (const v of ['allow', 'review', 'block']) {
    const of = inside.filter((e) => e.verdict === v)
    const sum = of.reduce((s, e) => s + Number(e.score), 0)
    verdicts[v] = { count: of.length, avgScore: of.length ? round2(sum / of.length) : null }
  }
  const reasons = new Map<string, number>()
  for (const e of inside)
    for (const r of new Set(JSON.parse(e.reasons) as string[])) reasons.set(r, (reasons.get(r) ?? 0) + 1)
  const total = inside.length
  const sum = inside.reduce((s, e) => s + Number(e.score), 0)
  return {
    total,
    avgScore: total ? round2(sum / total) : null,
    verdicts,
    topReasons: [...reasons]
      .map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1))
      .slice(0, 10),
  }
}

/** What velocity counts an event's accounts under: its IPv6 /64, or its IPv4 address. */
const velocityKey = (e: EventRow) => e.ip_block_hash ?? e.ip_hash

/**
 * IP velocity by brute force: the distinct accounts of the events before `ordered[k]` (in the order they
 * were recorded) on its IP (IPv6: its /64) in the 10 minutes before it, plus its own account.
 */
export function ipAccountsRecount(ordered: readonly EventRow[], k: number, windowMs = 10 * 60_000): number {
  const e = ordered[k]!
  const users = new Set<string>()
  for (let i = 0; i < k; i++) {
    const o = ordered[i]!
    if (
      velocityKey(o) === velocityKey(e) &&
      o.user_id !== null &&
      Number(o.created_ms) > Number(e.created_ms) - windowMs
    )
      users.add(o.user_id)
  }
  if (e.user_id !== null) users.add(e.user_id)
  return Math.min(100, users.size)
}

/** Per velocity key and account, the time of the latest event: what `ip_accounts` holds before any trim. */
export function ipAccountPairs(events: readonly EventRow[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const e of events) {
    const key = velocityKey(e)
    if (key === null || e.user_id === null) continue
    const k = `${key}|${e.user_id}`
    out.set(k, Math.max(out.get(k) ?? 0, Number(e.created_ms)))
  }
  return out
}
