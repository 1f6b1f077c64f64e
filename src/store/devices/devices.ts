import type { ConnectionClass, DevicePoint } from '../../scoring/types.js'
import { type Db, type Param, q, type Work } from '../engine/db.js'
import { ACCOUNT_COUNT_CAP } from '../events/ip-accounts.js'
import type { DeviceEvent, ScoredEvent } from '../events/scored-event.js'
import { COLLISION_QUERY, type LinkKind, linksOf, recordLinks } from './links.js'

export interface DeviceHistoryRows {
  /** Distinct accounts on the fingerprint / on fingerprint + network / on the resolved device; each includes the current one. */
  fingerprintAccounts: number
  fingerprintNetworkAccounts: number
  deviceAccounts: number
  /** Distinct IPs of the resolved device, including the current one. */
  deviceIps: number
  /**
   * Earlier observations of the resolved device since `sinceMs`, newest first, with the watch-mode
   * beacons of the event's fingerprint (marked `beacon`) merged in.
   */
  timeline: DevicePoint[]
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

/** The identity most recently issued to a fingerprint on a network prefix: one index probe. */
const ISSUED_ON_NETWORK = `SELECT token_id FROM device_observations
  WHERE tenant_id = ? AND device_id = ? AND ip_prefix = ? ORDER BY created_ms DESC, id DESC LIMIT 1`

const FINGERPRINT_TOKENS = `SELECT n FROM device_link_counts WHERE tenant_id = ? AND kind = 'ft' AND key = ?`
const IDENTITY_ACCOUNTS = `SELECT COUNT(*) AS n, MAX(CASE WHEN member = ? THEN 1 ELSE 0 END) AS own FROM (
  SELECT member FROM device_links WHERE tenant_id = ? AND kind = 'ta' AND key = ? LIMIT ${ACCOUNT_COUNT_CAP}) AS a`

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
   * Records the observation's links and returns everything the engine and the device profile need about
   * the device: its keys' member counts (one insert and one capped count read, whatever the history) and
   * the resolved device's recent timeline (an index range bounded by `sinceMs` and TIMELINE_LIMIT rows).
   * At rung 3 the identity links nothing, so only the links are recorded. The resolved device's history
   * is keyed by the fingerprint at rung 2 and by the token identity otherwise.
   */
  *history(e: DeviceEvent, createdMs: number, sinceMs: number): Work<DeviceHistoryRows> {
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
    const timelineRows = sql === null ? [] : yield* q.all<TimelineRow>(sql, params)
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
    if (rung !== 3 && e.deviceId !== null) {
      counted.push({ kind: 'fa', key: e.deviceId }, { kind: 'fi', key: e.deviceId })
      if (e.ipPrefix !== null) counted.push({ kind: 'fna', key: `${e.deviceId}|${e.ipPrefix}` })
    }
    const c = yield* recordLinks({
      tenantId: e.tenantId,
      links,
      counted,
      nowMs: createdMs,
      platform: e.device.platform,
    })
    const count = (k: LinkKind) => c.get(k) ?? 0
    return {
      fingerprintAccounts: count('fa'),
      fingerprintNetworkAccounts: count('fna'),
      deviceAccounts: byToken ? count('ta') : count('fa'),
      deviceIps: byToken ? count('ti') : count('fi'),
      timeline: timelineRows.map((r) => {
        const p: DevicePoint = {
          ms: Number(r.created_ms),
          ipHash: r.ip_hash,
          connection: r.connection_type as ConnectionClass | null,
        }
        if (Number(r.beacon) === 1) p.beacon = true
        return p
      }),
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

  /** The identity most recently issued to `fingerprint` on the network `prefix`, if any (rung 2). */
  async issuedOnNetwork(tenantId: string, fingerprint: string, prefix: string): Promise<string | null> {
    const r = await this.db.get<{ token_id: string }>(ISSUED_ON_NETWORK, [tenantId, fingerprint, prefix])
    return r?.token_id ?? null
  }

  /** Distinct token identities replayed with `fingerprint` (its `ft` counter): one primary-key probe. */
  async tokenIdentities(tenantId: string, fingerprint: string): Promise<number> {
    const r = await this.db.get<{ n: number }>(FINGERPRINT_TOKENS, [tenantId, fingerprint])
    return r ? Number(r.n) : 0
  }

  /**
   * Whether the token identity `identity` has any account (its `ta` links) and whether `userId` is one
   * of them: one bounded primary-key range.
   */
  async identityAccounts(
    tenantId: string,
    identity: string,
    userId: string,
  ): Promise<{ any: boolean; own: boolean }> {
    const r = await this.db.get<{ n: number; own: number | null }>(IDENTITY_ACCOUNTS, [
      userId,
      tenantId,
      identity,
    ])
    return { any: Number(r?.n ?? 0) > 0, own: Number(r?.own ?? 0) > 0 }
  }

  /** Observations of a fingerprint or resolved identity of one tenant, newest first. */
  async list(tenantId: string, deviceId: string, sinceMs: number | null, limit: number) {
    const rows = await this.db.all<ObsRow>(
      `SELECT id, event_id, created_ms, device_id, resolved_id, rung, ip_prefix, asn, country, connection_type, verdict
         FROM device_observations
        WHERE tenant_id = ? AND (device_id = ? OR resolved_id = ?) AND created_ms > ?
        ORDER BY created_ms DESC, id DESC LIMIT ?`,
      [tenantId, deviceId, deviceId, sinceMs ?? -1, limit],
    )
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
