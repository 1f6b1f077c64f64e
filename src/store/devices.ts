import type { ConnectionClass, DevicePoint } from '../scoring/types.js'
import { type Db, q, type Work } from './db.js'
import { COLLISION_QUERY, type LinkKind, linksOf, recordLinks } from './links.js'

/** One score of an event that carried a fingerprint or a device token. No raw IP: hash, prefix, ASN, country. */
export interface DeviceObservation {
  tenantId: string
  eventId: string
  createdMs: number
  /** The caller's raw fingerprint (`device_id`), null when only a token was sent. */
  deviceId: string | null
  resolvedId: string
  /** The device identity carried by the token returned for this event. */
  tokenId: string
  rung: 1 | 2 | 3
  userId: string | null
  ipHash: string | null
  ipPrefix: string | null
  asn: number | null
  country: string | null
  connectionType: ConnectionClass | null
  /** os/browser from the beacon, when known. */
  platform: string | null
  verdict: string
}

/** Which column links the resolved device's history: the token identity at rung 1, the fingerprint at rung 2. */
export type DeviceKey = { column: 'token_id' | 'device_id'; value: string }

export interface DeviceHistoryRows {
  /** Distinct accounts on the fingerprint / on fingerprint + network / on the resolved device; each includes the current one. */
  fingerprintAccounts: number
  fingerprintNetworkAccounts: number
  deviceAccounts: number
  /** Distinct IPs of the resolved device, including the current one. */
  deviceIps: number
  /** Earlier observations of the resolved device since `sinceMs`, newest first. */
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

const TIMELINE = (column: string) => `SELECT created_ms, ip_hash, connection_type FROM device_observations
  WHERE tenant_id = ? AND ${column} = ? AND created_ms > ? ORDER BY created_ms DESC, id DESC LIMIT ${TIMELINE_LIMIT}`
const TIMELINE_BY_TOKEN = TIMELINE('token_id')
const TIMELINE_BY_FINGERPRINT = TIMELINE('device_id')

const OBS_COLS =
  'tenant_id, event_id, created_ms, device_id, resolved_id, token_id, rung, user_id, ip_hash, ip_prefix, asn, country, connection_type, platform, verdict'

const INSERT_OBSERVATION = `INSERT INTO device_observations (${OBS_COLS}) VALUES (${OBS_COLS.split(',')
  .map(() => '?')
  .join(', ')})`

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
   * At rung 3 the identity links nothing, so only the links are recorded.
   */
  *history(
    o: Omit<DeviceObservation, 'eventId' | 'verdict'>,
    key: DeviceKey,
    sinceMs: number,
  ): Work<DeviceHistoryRows> {
    const timelineRows =
      o.rung === 3
        ? []
        : yield* q.all<{ created_ms: number; ip_hash: string | null; connection_type: string | null }>(
            key.column === 'token_id' ? TIMELINE_BY_TOKEN : TIMELINE_BY_FINGERPRINT,
            [o.tenantId, key.value, sinceMs],
          )
    const links = linksOf({
      device_id: o.deviceId,
      token_id: o.tokenId,
      user_id: o.userId,
      ip_hash: o.ipHash,
      ip_prefix: o.ipPrefix,
      rung: o.rung,
    })
    const counted: { kind: LinkKind; key: string }[] =
      o.rung === 3
        ? []
        : [
            { kind: 'ta', key: o.tokenId },
            { kind: 'ti', key: o.tokenId },
          ]
    if (o.rung !== 3 && o.deviceId !== null) {
      counted.push({ kind: 'fa', key: o.deviceId }, { kind: 'fi', key: o.deviceId })
      if (o.ipPrefix !== null) counted.push({ kind: 'fna', key: `${o.deviceId}|${o.ipPrefix}` })
    }
    const c = yield* recordLinks(o.tenantId, links, counted, o.createdMs, o.platform)
    const count = (k: LinkKind) => c.get(k) ?? 0
    const byToken = key.column === 'token_id'
    return {
      fingerprintAccounts: count('fa'),
      fingerprintNetworkAccounts: count('fna'),
      deviceAccounts: byToken ? count('ta') : count('fa'),
      deviceIps: byToken ? count('ti') : count('fi'),
      timeline: timelineRows.map((r) => ({
        ms: Number(r.created_ms),
        ipHash: r.ip_hash,
        connection: r.connection_type as ConnectionClass | null,
      })),
    }
  }

  /** The observation row itself, once the event's verdict is known. */
  *insertObservation(o: DeviceObservation): Work<void> {
    yield* q.run(INSERT_OBSERVATION, [
      o.tenantId,
      o.eventId,
      o.createdMs,
      o.deviceId,
      o.resolvedId,
      o.tokenId,
      o.rung,
      o.userId,
      o.ipHash,
      o.ipPrefix,
      o.asn,
      o.country,
      o.connectionType,
      o.platform,
      o.verdict,
    ])
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
