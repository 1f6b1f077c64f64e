import type { TenantContext } from '../../context.js'
import type { IpIntelResult } from '../../intel/ip/index.js'
import { VELOCITY_WINDOW_MS } from '../../scoring/checks/velocity.js'
import type { ConnectionClass, DeviceHistory } from '../../scoring/types.js'
import { ALL_TRAFFIC, type CollisionRate, type DeviceHistoryRows } from '../../store/devices/devices.js'
import { carriesDevice, type EventAttributes, type ObservedDevice } from '../../store/events/scored-event.js'
import type { Store, Work } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { newDeviceIdentity, signDeviceToken, type TokenRejection, verifyDeviceToken } from './device-token.js'

/** Collision risk of a valid token: only a copied cookie makes it cover a second person. */
export const TOKEN_COLLISION_RISK = 0.001
/** Used at rung 2 until the job has measured enough traffic. */
export const PRIOR_COLLISION_RISK = 0.1
/** Fingerprints (replayed with a valid token) a platform needs before its rate is trusted. */
export const COLLISION_MIN_SAMPLE = 50
/** Observations the collision job looks back over. */
export const COLLISION_WINDOW_MS = 90 * 24 * 3600_000
/** Timeline fetched for session behaviour: sessions longer than this are cut here. */
export const TIMELINE_WINDOW_MS = 24 * 3600_000

/** How the event's device was resolved, decided before the write (no history needed). */
export interface DeviceResolution extends ObservedDevice {
  /** Whether the event carried a fingerprint or a device token: only then is it observed. */
  observed: boolean
  fingerprint: string | null
  /** The event's network prefix (/24 or /48), the "network" of rung 2; null without a usable IP. */
  network: string | null
  /** The freshly signed token for the response; it carries `resolvedId`. */
  token: string
  tokenRejected: TokenRejection | null
  collisionRisk: number
  riskMeasured: boolean
}

export function connectionClass(ip: IpIntelResult | null): ConnectionClass | null {
  if (!ip) return null
  if (ip.isPrivacyRelay) return 'relay'
  if (ip.isDatacenter) return 'datacenter'
  if (ip.isProxy || ip.isVpn || ip.isTor) return 'proxy'
  return 'residential'
}

/** Measured risk for the platform when the job has one, else the all-traffic average, else the prior. */
export function collisionRiskFor(
  rates: Map<string, CollisionRate>,
  rung: 1 | 2 | 3,
  platform: string | null,
): { risk: number; measured: boolean } {
  if (rung === 1) return { risk: TOKEN_COLLISION_RISK, measured: false }
  if (rung === 3) return { risk: 0, measured: false }
  const own = platform ? rates.get(platform) : undefined
  if (own) return { risk: own.rate, measured: true }
  const all = rates.get(ALL_TRAFFIC)
  return { risk: all ? all.rate : PRIOR_COLLISION_RISK, measured: false }
}

/**
 * Rung 1 when a valid token of this tenant is replayed; else rung 2 when both a fingerprint and an IP
 * came, resolving to the identity most recently issued to that fingerprint on that network prefix (one
 * indexed read), or to a new identity; else rung 3, a new identity that links nothing. A rejected
 * token falls through to the lower rungs. The reported identity is always the one the freshly signed
 * token carries, so replaying that token (rung 1) keeps it, on any network.
 */
export async function resolveDevice(
  ctx: TenantContext,
  input: { fingerprint: string | null; token: string | null; ip: IpIntelResult | null },
): Promise<DeviceResolution> {
  const now = ctx.clock.now()
  let rung: 1 | 2 | 3 = 3
  let tokenRejected: TokenRejection | null = null
  let identity: string | null = null
  if (input.token !== null) {
    const check = verifyDeviceToken(ctx.hasher, ctx.tenant.id, input.token, now)
    if (check.ok) {
      identity = check.identity
      rung = 1
    } else tokenRejected = check.reason
  }
  const network = input.ip?.prefix ?? null
  if (rung !== 1 && input.fingerprint !== null && network !== null) {
    rung = 2
    identity = await ctx.store.devices.issuedOnNetwork(ctx.tenant.id, input.fingerprint, network)
  }
  const resolvedId = identity ?? newDeviceIdentity()
  const platform = null
  const rates = rung === 2 ? await ctx.store.devices.cachedRates(now) : new Map<string, CollisionRate>()
  const { risk, measured } = collisionRiskFor(rates, rung, platform)
  return {
    observed: input.fingerprint !== null || input.token !== null,
    fingerprint: input.fingerprint,
    network,
    rung,
    resolvedId,
    token: signDeviceToken(ctx.hasher, ctx.tenant.id, resolvedId, now),
    tokenRejected,
    connection: connectionClass(input.ip),
    platform,
    collisionRisk: risk,
    riskMeasured: measured,
  }
}

/**
 * A batch is resolved row by row in parallel, before its rows are written, so a row cannot find the
 * identity an earlier row of the same batch issued. This pass applies the rung-2 rule in row order:
 * a rung-2 row takes the identity the latest earlier row issued to its fingerprint on its network
 * (earlier rows are more recent than anything stored), and its token is re-signed for it.
 */
export function linkWithinBatch(ctx: TenantContext, devices: readonly DeviceResolution[]): void {
  const issued = new Map<string, string>()
  const now = ctx.clock.now()
  for (const d of devices) {
    if (d.rung === 3 || d.fingerprint === null || d.network === null) continue
    const key = `${d.fingerprint}\u0000${d.network}`
    const earlier = issued.get(key)
    if (d.rung === 2 && earlier !== undefined && earlier !== d.resolvedId) {
      d.resolvedId = earlier
      d.token = signDeviceToken(ctx.hasher, ctx.tenant.id, earlier, now)
    }
    issued.set(key, d.resolvedId)
  }
}

export interface DeviceFacts {
  history: DeviceHistory
  rows: DeviceHistoryRows
}

/**
 * Records the device's links and reads its history for one event, inside the writer's unit of work: the
 * counters include this event, and the timeline holds the device's earlier observations. Null for an
 * event that carried no device.
 */
export function* deviceHistory(
  ctx: TenantContext,
  e: EventAttributes,
  now: number,
): Work<DeviceFacts | null> {
  if (!carriesDevice(e)) return null
  const { rung, connection } = e.device
  const current = { ms: now, ipHash: e.ipHash, connection }
  const rows = yield* ctx.store.devices.history(e, now, now - TIMELINE_WINDOW_MS)
  if (rung === 3) {
    // Rung 3 links nothing: only this event counts.
    const history: DeviceHistory = {
      rung: 3,
      accounts: e.userId ? 1 : 0,
      accountsSameNetwork: 0,
      recentEvents: 1,
      current,
      timeline: [],
    }
    return {
      history,
      rows: {
        fingerprintAccounts: e.userId ? 1 : 0,
        fingerprintNetworkAccounts: 0,
        deviceAccounts: e.userId ? 1 : 0,
        deviceIps: e.ipHash ? 1 : 0,
        timeline: [],
      },
    }
  }
  // Velocity counts scored events: watch-mode beacons take part in session behaviour only.
  const recent = rows.timeline.filter((p) => !p.beacon && p.ms > now - VELOCITY_WINDOW_MS).length
  const history: DeviceHistory = {
    rung,
    accounts: rung === 1 ? rows.deviceAccounts : rows.fingerprintAccounts,
    accountsSameNetwork: rows.fingerprintNetworkAccounts,
    recentEvents: recent + 1,
    current,
    timeline: rows.timeline,
  }
  return { history, rows }
}

export interface CollisionMeasurement {
  rates: CollisionRate[]
  /** Fingerprints in the whole sample, measured or not. */
  sample: number
}

/**
 * The background job: for each platform, the share of fingerprints replayed with a valid token that
 * turned out to carry two or more token identities. Platforms under `minSample` fingerprints get no
 * rate of their own (scoring falls back to the all-traffic average, which needs the same sample).
 */
export async function measureCollisionRisk(
  store: Store,
  clock: Clock,
  options: { minSample?: number; windowMs?: number } = {},
): Promise<CollisionMeasurement> {
  const minSample = options.minSample ?? COLLISION_MIN_SAMPLE
  const now = clock.now()
  const groups = await store.devices.measureCollisions(now - (options.windowMs ?? COLLISION_WINDOW_MS))
  const rate = (collided: number, fingerprints: number) =>
    Math.round((collided / fingerprints) * 10_000) / 10_000
  const rates: CollisionRate[] = []
  let fingerprints = 0
  let collided = 0
  for (const g of groups) {
    fingerprints += g.fingerprints
    collided += g.collided
    if (g.platform !== '' && g.fingerprints >= minSample) {
      rates.push({ ...g, rate: rate(g.collided, g.fingerprints), measuredMs: now })
    }
  }
  if (fingerprints >= minSample) {
    rates.push({
      platform: ALL_TRAFFIC,
      fingerprints,
      collided,
      rate: rate(collided, fingerprints),
      measuredMs: now,
    })
  }
  await store.devices.saveRates(rates, now)
  return { rates, sample: fingerprints }
}
