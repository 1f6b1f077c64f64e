import type { ConnectionClass } from '../../scoring/types.js'
import { type Db, q, together, type Work } from '../engine/db.js'
import { Cached, type Invalidation, tenantScoped } from '../engine/invalidation.js'
import { Ja4Store } from './ja4.js'

/** One beacon the browser library sent: what verdict saw of the browser itself. */
export interface BeaconObservation {
  tenantId: string
  /** The fingerprint hash the page computed (the `device_id` callers pass to /v1/score). */
  deviceId: string
  visitId: string
  /** The watch session: the first visit's id for a watch beacon (`watch_of`), else the beacon's own. */
  sessionId: string
  createdMs: number
  /** Keyed hash of the client IP; the raw address is never stored. */
  ipHash: string | null
  /** Keyed hash of the client's IPv4 /24 or IPv6 /64 (a score binds to a beacon of its own network). */
  netHash: string | null
  /** How the IP is classed (datacenter, proxy, relay, residential), as for scored events; null without intel. */
  connection: ConnectionClass | null
  os: string | null
  browser: string | null
  mobile: boolean
  /** The integrity flags and antidetect verdict of the body, as sent. */
  flags: Record<string, unknown>
  /** JA4 of the TLS connection the beacon came over (src/tls/request.ts), when verdict had one to believe. */
  ja4: string | null
}

interface Row {
  tenant_id: string
  device_id: string
  visit_id: string
  session_id: string | null
  created_ms: number
  ip_hash: string | null
  net_hash: string | null
  connection_type: string | null
  os: string | null
  browser: string | null
  mobile: number
  flags: string
  ja4: string | null
}

const COLS =
  'tenant_id, device_id, visit_id, session_id, created_ms, ip_hash, net_hash, connection_type, os, browser, mobile, flags, ja4'

/**
 * The beacon a score binds (`forScore`), without and with a visit. Texts built once: every score with a
 * fingerprint reads one, and the engines find their prepared statement by the text (a text built per call
 * is hashed again each time, about 2 µs at this length).
 */
const forScoreSql = (visit: string) => `SELECT ${COLS} FROM beacon_observations
  WHERE tenant_id = ? AND device_id = ? AND created_ms >= ? AND (ip_hash = ? OR net_hash = ?)${visit}
  ORDER BY created_ms DESC LIMIT 1`
const FOR_SCORE = forScoreSql('')
const FOR_SCORE_VISIT = forScoreSql(' AND visit_id = ?')

function* insert(o: BeaconObservation): Work<number> {
  return yield* q.run(
    `INSERT INTO beacon_observations (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      o.tenantId,
      o.deviceId,
      o.visitId,
      o.sessionId,
      o.createdMs,
      o.ipHash,
      o.netHash,
      o.connection,
      o.os,
      o.browser,
      o.mobile ? 1 : 0,
      JSON.stringify(o.flags),
      o.ja4,
    ],
  )
}

/** The topic that drops a tenant's cached "has sent a beacon" (store/engine/invalidation.ts). */
const topic = (tenantId: string) => `beacons:${tenantId}`

/**
 * Marks the tenant's first beacon (migration 35); only that one changes the row, and only then are the
 * other processes told, so a beacon costs no notification after the first.
 */
function* markFirst(tenantId: string, createdMs: number, inv: Invalidation): Work<void> {
  const changed = yield* q.run(
    'UPDATE tenants SET first_beacon_ms = ? WHERE id = ? AND first_beacon_ms IS NULL',
    [createdMs, tenantId],
  )
  if (changed > 0) yield* inv.touch(topic(tenantId))
}

export class BeaconStore {
  private readonly sent: Cached<string, boolean>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.sent = new Cached(inv, tenantScoped('beacons'))
  }

  /**
   * Whether the tenant has ever sent a beacon, from memory. Scores of a tenant that has not (an
   * integration without the browser library) skip the beacon reads: one statement fewer per score. A
   * first beacon recorded by another process drops the cached answer (its invalidation).
   */
  anySent(tenantId: string): Promise<boolean> {
    return this.sent.get(tenantId, async () => {
      const r = await this.db.get<{ first: number | null }>(
        'SELECT first_beacon_ms AS first FROM tenants WHERE id = ?',
        [tenantId],
      )
      return r !== undefined && r.first !== null
    })
  }

  /**
   * Records the beacon and, when it has a JA4, counts it for that JA4 in the same transaction; `spoofing`
   * (whether its flags show a faked identity) goes only into that count (store/devices/ja4.ts).
   */
  async add(o: BeaconObservation & { spoofing: boolean; meter?: Work<void> }): Promise<void> {
    const inv = this.inv
    await this.db.tx(function* () {
      // The tenant's usage first: over quota, nothing is written.
      if (o.meter) yield* o.meter
      yield* together(insert(o), markFirst(o.tenantId, o.createdMs, inv))
      if (o.ja4) yield* Ja4Store.count(o.tenantId, o.ja4, o.createdMs, o.spoofing)
    })
  }

  /** The watch session of a visit of this tenant and fingerprint at or after `sinceMs`, if there is one. */
  *sessionOf(tenantId: string, deviceId: string, visitId: string, sinceMs: number): Work<string | null> {
    const r = yield* q.get<{ session_id: string | null }>(
      `SELECT session_id FROM beacon_observations
        WHERE tenant_id = ? AND device_id = ? AND visit_id = ? AND created_ms >= ?`,
      [tenantId, deviceId, visitId, sinceMs],
    )
    return r?.session_id ?? null
  }

  /** The tenant's newest beacon of this fingerprint at or after `sinceMs`, from anywhere (tooling, tests). */
  async latest(tenantId: string, deviceId: string, sinceMs: number): Promise<BeaconObservation | undefined> {
    return toObservation(
      await this.db.get<Row>(
        `SELECT ${COLS} FROM beacon_observations
          WHERE tenant_id = ? AND device_id = ? AND created_ms >= ?
          ORDER BY created_ms DESC LIMIT 1`,
        [tenantId, deviceId, sinceMs],
      ),
    )
  }

  /**
   * The beacon a score may use: of this tenant and fingerprint, at or after `sinceMs`, sent from the
   * score's exact IP or its network. With `visitId` only that visit; without, the newest such beacon.
   */
  *forScore(
    tenantId: string,
    deviceId: string,
    sinceMs: number,
    from: { ipHash: string; netHash: string },
    visitId: string | null,
  ): Work<BeaconObservation | undefined> {
    return toObservation(
      yield* q.get<Row>(visitId === null ? FOR_SCORE : FOR_SCORE_VISIT, [
        tenantId,
        deviceId,
        sinceMs,
        from.ipHash,
        from.netHash,
        ...(visitId === null ? [] : [visitId]),
      ]),
    )
  }
}

function toObservation(r: Row | undefined): BeaconObservation | undefined {
  if (!r) return undefined
  return {
    tenantId: r.tenant_id,
    deviceId: r.device_id,
    visitId: r.visit_id,
    sessionId: r.session_id ?? r.visit_id,
    createdMs: Number(r.created_ms),
    ipHash: r.ip_hash,
    netHash: r.net_hash,
    connection: r.connection_type as ConnectionClass | null,
    os: r.os,
    browser: r.browser,
    mobile: Number(r.mobile) === 1,
    flags: JSON.parse(r.flags) as Record<string, unknown>,
    ja4: r.ja4,
  }
}
