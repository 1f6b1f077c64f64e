import type { ConnectionClass, DevicePoint } from '../scoring/types.js'
import type { Db, Param, Sql } from './db.js'

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

export interface DeviceHistoryQuery {
  tenantId: string
  fingerprint: string | null
  key: DeviceKey
  userId: string | null
  ipHash: string | null
  ipPrefix: string | null
  /** Timeline rows newer than this are returned. */
  sinceMs: number
}

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

const OBS_COLS =
  'tenant_id, event_id, created_ms, device_id, resolved_id, token_id, rung, user_id, ip_hash, ip_prefix, asn, country, connection_type, platform, verdict'

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

  async insertObservation(sql: Sql, o: DeviceObservation): Promise<void> {
    await sql.run(
      `INSERT INTO device_observations (${OBS_COLS}) VALUES (${OBS_COLS.split(',')
        .map(() => '?')
        .join(', ')})`,
      [
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
      ],
    )
  }

  /**
   * Everything the engine and the device profile need about one event's device, in two statements on
   * the writer's transaction: one pass of distinct counts over the fingerprint's and the resolved
   * device's observations, and the resolved device's recent timeline.
   */
  async history(sql: Sql, q: DeviceHistoryQuery): Promise<DeviceHistoryRows> {
    const col = q.key.column
    const fp = q.fingerprint
    const k = q.key.value
    const params: Param[] = [
      fp,
      fp,
      q.userId,
      fp,
      q.ipPrefix,
      fp,
      q.ipPrefix,
      q.userId,
      k,
      k,
      q.userId,
      k,
      k,
      q.ipHash,
      q.tenantId,
      fp,
      k,
    ]
    const agg = await sql.get<Record<string, unknown>>(
      `SELECT
         COUNT(DISTINCT CASE WHEN device_id = ? THEN user_id END) AS fp_accounts,
         MAX(CASE WHEN device_id = ? AND user_id = ? THEN 1 ELSE 0 END) AS fp_seen,
         COUNT(DISTINCT CASE WHEN device_id = ? AND ip_prefix = ? THEN user_id END) AS net_accounts,
         MAX(CASE WHEN device_id = ? AND ip_prefix = ? AND user_id = ? THEN 1 ELSE 0 END) AS net_seen,
         COUNT(DISTINCT CASE WHEN ${col} = ? THEN user_id END) AS dev_accounts,
         MAX(CASE WHEN ${col} = ? AND user_id = ? THEN 1 ELSE 0 END) AS dev_seen,
         COUNT(DISTINCT CASE WHEN ${col} = ? THEN ip_hash END) AS dev_ips,
         MAX(CASE WHEN ${col} = ? AND ip_hash = ? THEN 1 ELSE 0 END) AS ip_seen
       FROM device_observations WHERE tenant_id = ? AND (device_id = ? OR ${col} = ?)`,
      params,
    )
    const a = agg ?? {}
    const plus = (count: unknown, seen: unknown, present: boolean) =>
      n(count) + (present && n(seen) !== 1 ? 1 : 0)
    const rows = await sql.all<{
      created_ms: number
      ip_hash: string | null
      connection_type: string | null
    }>(
      `SELECT created_ms, ip_hash, connection_type FROM device_observations
        WHERE tenant_id = ? AND ${col} = ? AND created_ms > ?
        ORDER BY created_ms DESC, id DESC LIMIT ${TIMELINE_LIMIT}`,
      [q.tenantId, k, q.sinceMs],
    )
    return {
      fingerprintAccounts: fp ? plus(a['fp_accounts'], a['fp_seen'], q.userId !== null) : 0,
      fingerprintNetworkAccounts:
        fp && q.ipPrefix ? plus(a['net_accounts'], a['net_seen'], q.userId !== null) : 0,
      deviceAccounts: plus(a['dev_accounts'], a['dev_seen'], q.userId !== null),
      deviceIps: plus(a['dev_ips'], a['ip_seen'], q.ipHash !== null),
      timeline: rows.map((r) => ({
        ms: Number(r.created_ms),
        ipHash: r.ip_hash,
        connection: r.connection_type as ConnectionClass | null,
      })),
    }
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
      `SELECT platform, COUNT(*) AS fingerprints, SUM(CASE WHEN identities > 1 THEN 1 ELSE 0 END) AS collided
         FROM (SELECT tenant_id, device_id, MAX(platform) AS platform, COUNT(DISTINCT token_id) AS identities
                 FROM device_observations
                WHERE rung = 1 AND device_id IS NOT NULL AND created_ms > ?
                GROUP BY tenant_id, device_id) AS fp
        GROUP BY platform`,
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
    await this.db.tx(async (sql) => {
      await sql.run('DELETE FROM device_collision_rates')
      for (const r of rates) {
        await sql.run(
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
