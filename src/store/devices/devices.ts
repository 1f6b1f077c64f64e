import type { ConnectionClass, DevicePoint } from '../../scoring/types.js'
import { type Db, none, type Param, q, together, type Work } from '../engine/db.js'
import type { DeviceEvent, ScoredEvent } from '../events/scored-event.js'
import { COLLISION_QUERY, type LinkKind, linksOf, markersOf, readLinks } from './links.js'

export interface DeviceHistoryRows {
  /** Distinct accounts on the fingerprint / on fingerprint + network / on the resolved device; each includes the current one. */
  fingerprintAccounts: number
  fingerprintNetworkAccounts: number
  deviceAccounts: number
  /** Distinct IPs of the resolved device, including the current one. */
  deviceIps: number
  /** Distinct IPs of the fingerprint (rungs 1 and 2), including the current one. */
  fingerprintIps: number
  /**
   * Everything the fingerprint's observations show is one browser that loses its cookie: its token
   * identities followed one another and never alternated (`fx`), and one of them carried two or more
   * accounts (`fm`); this event's markers included.
   */
  oneBrowser: boolean
  /**
   * Earlier observations of the resolved device since `sinceMs`, newest first, with the watch-mode
   * beacons of the event's fingerprint (marked `beacon`) merged in.
   */
  timeline: DevicePoint[]
}

/** Rung 2's facts (DeviceStore.networkIdentity). */
export interface NetworkIdentity {
  issued: string | null
  tokens: number
  anyAccount: boolean
  ownAccount: boolean
}

export interface CollisionRate {
  /** `*` for all traffic, '' for an unknown platform, else `os/browser`. */
  platform: string
  fingerprints: number
  collided: number
  rate: number
  measuredMs: number
}

/** Timeline rows fetched per event: above every threshold that reads them (config values stop at 100). */
export const TIMELINE_LIMIT = 120
export const ALL_TRAFFIC = '*'

/**
 * One point per earlier scored observation of the device (by token identity at rung 1, by fingerprint at
 * rung 2, leaving out the fingerprint's rung-3 events, which link nothing) and, when the event carries a
 * fingerprint, one per watch-mode beacon of that fingerprint: two index ranges in one statement, each
 * bounded by `sinceMs` and TIMELINE_LIMIT rows, merged newest first.
 */
const EVENT_POINTS = (column: 'token_id' | 'device_id') =>
  `SELECT created_ms, id, 0 AS beacon, ip_hash, connection_type FROM device_observations
    WHERE tenant_id = ? AND ${column} = ? AND created_ms > ?${column === 'device_id' ? ' AND rung <> 3' : ''}
    ORDER BY created_ms DESC, id DESC LIMIT ${TIMELINE_LIMIT}`
// Only the beacons of the watch session the score named (`beaconSession`): a forged beacon opens a
// session of its own, which no score of the victim's page names.
const BEACON_POINTS = `SELECT created_ms, id, 1 AS beacon, ip_hash, connection_type FROM beacon_observations
    WHERE tenant_id = ? AND session_id = ? AND device_id = ? AND created_ms > ?
    ORDER BY created_ms DESC, id DESC LIMIT ${TIMELINE_LIMIT}`
const withBeacons = (
  events: string,
) => `SELECT created_ms, id, beacon, ip_hash, connection_type FROM (${events}) AS o
  UNION ALL SELECT created_ms, id, beacon, ip_hash, connection_type FROM (${BEACON_POINTS}) AS b
  ORDER BY created_ms DESC, beacon, id DESC`
const TIMELINE_BY_TOKEN = EVENT_POINTS('token_id')
const TIMELINE_BY_TOKEN_AND_BEACONS = withBeacons(EVENT_POINTS('token_id'))
const TIMELINE_BY_FINGERPRINT = EVENT_POINTS('device_id')
const TIMELINE_BY_FINGERPRINT_AND_BEACONS = withBeacons(EVENT_POINTS('device_id'))

/** The token identity of the fingerprint's latest observation that linked anything (rung 1 or 2). */
const PREVIOUS_TOKEN = `SELECT token_id FROM device_observations WHERE tenant_id = ? AND device_id = ? AND rung <> 3
  ORDER BY created_ms DESC, id DESC LIMIT 1`

/**
 * What rung 2 decides on, in one statement: the identity most recently issued to a fingerprint on a
 * network prefix (one index probe), the fingerprint's token identities (its `ft` counter, a primary-key
 * probe), and whether that identity has any account and the event's account among them (two primary-key
 * probes of its `ta` links).
 */
const NETWORK_IDENTITY = `SELECT i.token_id AS issued,
    (SELECT n FROM device_link_counts WHERE tenant_id = ? AND kind = 'ft' AND key = ?) AS tokens,
    CASE WHEN EXISTS (SELECT 1 FROM device_links l WHERE l.tenant_id = ? AND l.kind = 'ta' AND l.key = i.token_id)
      THEN 1 ELSE 0 END AS any_account,
    CASE WHEN EXISTS (SELECT 1 FROM device_links l WHERE l.tenant_id = ? AND l.kind = 'ta' AND l.key = i.token_id
      AND l.member = ?) THEN 1 ELSE 0 END AS own
  FROM (SELECT 1 AS one) AS d LEFT JOIN (
    SELECT token_id FROM device_observations WHERE tenant_id = ? AND device_id = ? AND ip_prefix = ?
     ORDER BY created_ms DESC, id DESC LIMIT 1) AS i ON 1 = 1`

/**
 * The observations whose resolved identity is the parameter (given twice), with the columns asked for,
 * as two disjoint index ranges: since version 9 the resolved identity equals the token identity, so
 * those rows are found through the token index; the resolved index holds only the older rows where the
 * two differ (migration 29). A UNION ALL rather than an OR: SQLite does not use a partial index for one
 * term of an OR.
 */
export const observationsResolvedTo = (columns: string): string =>
  `SELECT ${columns} FROM device_observations WHERE tenant_id = ? AND token_id = ? AND resolved_id = token_id
   UNION ALL SELECT ${columns} FROM device_observations WHERE tenant_id = ? AND resolved_id = ? AND resolved_id <> token_id`

const LIST_COLUMNS =
  'id, event_id, created_ms, device_id, resolved_id, rung, ip_prefix, asn, country, connection_type, verdict'
/** A fingerprint's or a resolved identity's observations since a time, newest first (UNION drops rows found twice). */
const LIST_OBSERVATIONS = `SELECT ${LIST_COLUMNS} FROM (
    SELECT ${LIST_COLUMNS} FROM device_observations WHERE tenant_id = ? AND device_id = ? AND created_ms > ?
    UNION SELECT ${LIST_COLUMNS} FROM device_observations
     WHERE tenant_id = ? AND token_id = ? AND resolved_id = token_id AND created_ms > ?
    UNION SELECT ${LIST_COLUMNS} FROM device_observations
     WHERE tenant_id = ? AND resolved_id = ? AND resolved_id <> token_id AND created_ms > ?) AS o
  ORDER BY created_ms DESC, id DESC LIMIT ?`

const OBS_COLS =
  'tenant_id, event_id, created_ms, device_id, resolved_id, token_id, rung, user_id, ip_hash, ip_prefix, asn, country, connection_type, platform, verdict'

const INSERT_OBSERVATION = `INSERT INTO device_observations (${OBS_COLS}) VALUES (${OBS_COLS.split(',')
  .map(() => '?')
  .join(', ')})`

interface TimelineRow {
  created_ms: number
  beacon?: number
  ip_hash: string | null
  connection_type: string | null
}

interface ObsRow {
  id: number
  event_id: string
  created_ms: number
  device_id: string | null
  resolved_id: string
  rung: number
  ip_prefix: string | null
  asn: number | null
  country: string | null
  connection_type: string | null
  verdict: string
}

const n = (v: unknown) => Number(v ?? 0)

export class DeviceStore {
  private rates: { at: number; byPlatform: Map<string, CollisionRate> } | null = null

  constructor(private readonly db: Db) {}

  /**
   * Everything the engine and the device profile need about the device, read in one batch: its keys'
   * member counts with this observation's links included (one capped count read, whatever the history)
   * and the resolved device's recent timeline (an index range bounded by `sinceMs` and TIMELINE_LIMIT
   * rows); and `write`, the statements that record the observation's links, which the caller runs with
   * the event's other writes. At rung 3 the identity links nothing, so only the links are recorded. The
   * resolved device's history is keyed by the fingerprint at rung 2 and by the token identity otherwise.
   */
  *history(
    e: DeviceEvent,
    createdMs: number,
    sinceMs: number,
  ): Work<DeviceHistoryRows & { write: Work<void> }> {
    const { rung, resolvedId } = e.device
    const fingerprint = e.deviceId
    // Rung 2 is reached only with a fingerprint (and an IP); its history is the fingerprint's.
    const byToken = rung !== 2
    const session = fingerprint === null ? undefined : e.device.beaconSession
    let sql: string | null = null
    if (rung === 2) sql = session ? TIMELINE_BY_FINGERPRINT_AND_BEACONS : TIMELINE_BY_FINGERPRINT
    else if (rung === 1) sql = session ? TIMELINE_BY_TOKEN_AND_BEACONS : TIMELINE_BY_TOKEN
    const params: Param[] = [e.tenantId, byToken ? resolvedId : fingerprint, sinceMs]
    if (session && fingerprint !== null) params.push(e.tenantId, session, fingerprint, sinceMs)
    const links = linksOf({
      device_id: e.deviceId,
      token_id: resolvedId,
      user_id: e.userId,
      ip_hash: e.ipHash,
      ip_prefix: e.ipPrefix,
      rung,
    })
    const counted: { kind: LinkKind; key: string }[] =
      rung === 3
        ? []
        : [
            { kind: 'ta', key: resolvedId },
            { kind: 'ti', key: resolvedId },
          ]
    const fp = rung === 3 ? null : e.deviceId
    if (fp !== null) {
      counted.push(
        { kind: 'fa', key: fp },
        { kind: 'fi', key: fp },
        { kind: 'fx', key: fp },
        { kind: 'fm', key: fp },
      )
      if (e.ipPrefix !== null) counted.push({ kind: 'fna', key: `${fp}|${e.ipPrefix}` })
    }
    // Only a replayed token can mark its fingerprint (markersOf), so only rung 1 reads the previous token.
    const [timelineRows, c, previous] = yield* together(
      sql === null ? none<TimelineRow[]>([]) : q.all<TimelineRow>(sql, params),
      readLinks({ tenantId: e.tenantId, links, counted, nowMs: createdMs, platform: e.device.platform }),
      rung === 1 && fp !== null ? q.get<{ token_id: string }>(PREVIOUS_TOKEN, [e.tenantId, fp]) : none(),
    )
    const count = (k: LinkKind) => c.counts.get(k) ?? 0
    const markers = markersOf({
      fingerprint: fp,
      rung,
      token: resolvedId,
      previousToken: previous?.token_id ?? null,
      tokenAccounts: count('ta'),
    })
    const marked = (k: LinkKind) => count(k) > 0 || markers.some((m) => m.kind === k)
    return {
      fingerprintAccounts: count('fa'),
      fingerprintNetworkAccounts: count('fna'),
      deviceAccounts: byToken ? count('ta') : count('fa'),
      deviceIps: byToken ? count('ti') : count('fi'),
      fingerprintIps: count('fi'),
      oneBrowser: fp !== null && marked('fm') && !marked('fx'),
      timeline: timelineRows.map((r) => {
        const p: DevicePoint = {
          ms: Number(r.created_ms),
          ipHash: r.ip_hash,
          connection: r.connection_type as ConnectionClass | null,
        }
        if (Number(r.beacon) === 1) p.beacon = true
        return p
      }),
      write: c.write(markers),
    }
  }

  /**
   * The observation row itself, once the event's verdict is known: one per event that carried a device
   * (no raw IP: hash, prefix, ASN, country). An event without a device records nothing here.
   */
  *insertObservation(s: ScoredEvent): Work<void> {
    const a = s.attributes
    const d = a.device
    if (!d) return
    yield* q.run(INSERT_OBSERVATION, [
      a.tenantId,
      s.id,
      s.createdMs,
      a.deviceId,
      d.resolvedId,
      // The identity of the returned token: the resolved identity (rows before version 9 may differ).
      d.resolvedId,
      d.rung,
      a.userId,
      a.ipHash,
      a.ipPrefix,
      a.asn,
      a.ipCountry,
      d.connection,
      d.platform,
      s.result.verdict,
    ])
  }

  /**
   * Rung 2's facts about a fingerprint on a network prefix: the identity most recently issued to it
   * there (null if none), the distinct token identities replayed with the fingerprint, and whether that
   * identity has any account (its `ta` links) and `userId` among them.
   */
  *networkIdentity(
    tenantId: string,
    fingerprint: string,
    prefix: string,
    userId: string | null,
  ): Work<NetworkIdentity> {
    const r = yield* q.get<{
      issued: string | null
      tokens: number | null
      any_account: number
      own: number
    }>(NETWORK_IDENTITY, [tenantId, fingerprint, tenantId, tenantId, userId, tenantId, fingerprint, prefix])
    return {
      issued: r?.issued ?? null,
      tokens: n(r?.tokens),
      anyAccount: n(r?.any_account) === 1,
      ownAccount: n(r?.own) === 1,
    }
  }

  /** Observations of a fingerprint or resolved identity of one tenant, newest first. */
  async list(tenantId: string, deviceId: string, sinceMs: number | null, limit: number) {
    const since = sinceMs ?? -1
    const rows = await this.db.all<ObsRow>(LIST_OBSERVATIONS, [
      ...[tenantId, deviceId, since],
      ...[tenantId, deviceId, since],
      ...[tenantId, deviceId, since],
      limit,
    ])
    return rows.map((r) => ({
      createdMs: Number(r.created_ms),
      eventId: r.event_id,
      deviceId: r.device_id,
      resolvedId: r.resolved_id,
      rung: Number(r.rung),
      resolution: Number(r.rung) === 1 ? 'deterministic' : 'probabilistic',
      networkPrefix: r.ip_prefix,
      asn: r.asn === null ? null : Number(r.asn),
      country: r.country,
      connectionType: r.connection_type,
      verdict: r.verdict,
    }))
  }

  /**
   * Per platform: fingerprints replayed with at least one valid device token since `sinceMs`, and how
   * many of them were replayed with two or more different token identities. Across all tenants (only
   * the counts leave the query), each fingerprint grouped within its tenant.
   */
  async measureCollisions(
    sinceMs: number,
  ): Promise<{ platform: string; fingerprints: number; collided: number }[]> {
    const rows = await this.db.all<{ platform: string | null; fingerprints: number; collided: number }>(
      COLLISION_QUERY,
      [sinceMs],
    )
    return rows.map((r) => ({
      platform: r.platform ?? '',
      fingerprints: n(r.fingerprints),
      collided: n(r.collided),
    }))
  }

  /** Replaces the stored rates and the in-memory copy the scoring path reads. */
  async saveRates(rates: CollisionRate[], now: number): Promise<void> {
    await this.db.tx(function* () {
      yield* q.run('DELETE FROM device_collision_rates')
      for (const r of rates) {
        yield* q.run(
          'INSERT INTO device_collision_rates (platform, fingerprints, collided, rate, measured_ms) VALUES (?, ?, ?, ?, ?)',
          [r.platform, r.fingerprints, r.collided, r.rate, r.measuredMs],
        )
      }
    })
    this.rates = { at: now, byPlatform: new Map(rates.map((r) => [r.platform, r])) }
  }

  /** The measured rates, re-read from storage at most once a minute (another process may run the job). */
  async cachedRates(now: number): Promise<Map<string, CollisionRate>> {
    if (this.rates && now - this.rates.at < 60_000 && now >= this.rates.at) return this.rates.byPlatform
    const rows = await this.db.all<{
      platform: string
      fingerprints: number
      collided: number
      rate: number
      measured_ms: number
    }>('SELECT platform, fingerprints, collided, rate, measured_ms FROM device_collision_rates')
    const byPlatform = new Map(
      rows.map((r) => [
        r.platform,
        {
          platform: r.platform,
          fingerprints: n(r.fingerprints),
          collided: n(r.collided),
          rate: Number(r.rate),
          measuredMs: n(r.measured_ms),
        },
      ]),
    )
    this.rates = { at: now, byPlatform }
    return byPlatform
  }
}
