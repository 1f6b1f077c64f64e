import type { PrivacyStore } from '../../store/privacy/privacy.js'

type SubjectExport = Awaited<ReturnType<PrivacyStore['export']>>
type Row = Record<string, unknown>

/** Rows of several answers without repeats, and how many repeats were dropped. */
function union<T>(lists: T[][], key: (row: T) => string): { rows: T[]; repeats: number } {
  const seen = new Map<string, T>()
  let repeats = 0
  for (const row of lists.flat()) {
    const k = key(row)
    if (seen.has(k)) repeats++
    else seen.set(k, row)
  }
  return { rows: [...seen.values()], repeats }
}

const newestFirst = <T>(rows: T[], at: (row: T) => number, limit: number): T[] =>
  rows.sort((a, b) => at(b) - at(a)).slice(0, limit)

const observationKey = (o: Row) => `${o['event_id']}|${o['created_ms']}|${o['resolved_id']}|${o['device_id']}`

/**
 * Joins the export answers of one subject whose phone number had several stored forms. A row that
 * matched more than one of them (an event found by its email and by its phone) appears and counts
 * once; the counts are exact whenever no answer was cut at `limit`. Device profiles of one resolved
 * identity found in several answers are combined: first and last seen exactly, observations without
 * the repeats seen, distinct IPs and accounts as the largest single answer (a lower bound).
 */
export function mergeExports(parts: SubjectExport[], limit: number): SubjectExport {
  const [first, ...rest] = parts
  if (!first) throw new Error('mergeExports needs at least one answer')
  if (rest.length === 0) return first
  const sum = (f: (p: SubjectExport) => number) => parts.reduce((n, p) => n + f(p), 0)
  const events = union(
    parts.map((p) => p.events),
    (e) => e.id,
  )
  const lookups = union(
    parts.map((p) => p.lookups),
    (l) => String(l.id),
  )
  const observations = union(
    parts.map((p) => p.observations),
    observationKey,
  )
  const repeatedPerDevice = new Map<unknown, number>()
  const once = new Set<string>()
  for (const o of parts.flatMap((p) => p.observations)) {
    const k = observationKey(o)
    if (once.has(k))
      repeatedPerDevice.set(o['resolved_id'], (repeatedPerDevice.get(o['resolved_id']) ?? 0) + 1)
    once.add(k)
  }
  const devices = new Map<unknown, Row>()
  for (const d of parts.flatMap((p) => p.devices)) {
    const id = d['resolved_id']
    const had = devices.get(id)
    if (!had) {
      devices.set(id, { ...d })
      continue
    }
    had['first_seen_ms'] = Math.min(Number(had['first_seen_ms']), Number(d['first_seen_ms']))
    had['last_seen_ms'] = Math.max(Number(had['last_seen_ms']), Number(d['last_seen_ms']))
    had['observations'] = Number(had['observations']) + Number(d['observations'])
    had['distinct_ips'] = Math.max(Number(had['distinct_ips']), Number(d['distinct_ips']))
    had['accounts'] = Math.max(Number(had['accounts']), Number(d['accounts']))
  }
  for (const [id, n] of repeatedPerDevice) {
    const d = devices.get(id)
    if (d) d['observations'] = Number(d['observations']) - n
  }
  return {
    events: newestFirst(events.rows, (e) => e.createdMs, limit),
    eventCount: sum((p) => p.eventCount) - events.repeats,
    lookups: newestFirst(lookups.rows, (l) => l.createdMs, limit),
    lookupCount: sum((p) => p.lookupCount) - lookups.repeats,
    listEntries: newestFirst(
      union(
        parts.map((p) => p.listEntries),
        (e) => String(e['id']),
      ).rows,
      (e) => Number(e['id']),
      limit,
    ),
    labels: newestFirst(
      union(
        parts.map((p) => p.labels),
        (l) => String(l.id),
      ).rows,
      (l) => l.createdMs,
      limit,
    ),
    observations: newestFirst(observations.rows, (o) => Number(o['created_ms']), limit),
    observationCount: sum((p) => p.observationCount) - observations.repeats,
    devices: newestFirst([...devices.values()], (d) => Number(d['last_seen_ms']), limit),
    beacons: newestFirst(
      union(
        parts.map((p) => p.beacons),
        (b) => String(b['visit_id']),
      ).rows,
      (b) => Number(b['created_ms']),
      limit,
    ),
    idempotent: newestFirst(
      union(
        parts.map((p) => p.idempotent),
        (r) => `${r['event_id']}|${r['key_hash']}`,
      ).rows,
      (r) => Number(r['created_ms']),
      limit,
    ),
  }
}
