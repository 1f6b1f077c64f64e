import Bowser from 'bowser'
import {
  BEACON_FLAGS,
  type BeaconBody,
  type BeaconDevice,
  type BeaconFlag,
  type BeaconReply,
} from '../../beacon/contract.js'
import type { TenantContext } from '../../context.js'
import { ApiError } from '../../errors.js'
import { block64, type ParsedIp, parseIp } from '../../intel/ip/normalize.js'
import type { DeviceFlags } from '../../scoring/types.js'
import type { BeaconObservation } from '../../store/devices/beacons.js'
import type { Work } from '../../store/engine/db.js'
import { randomToken } from '../../util/secrets.js'
import type { AuthContext } from '../access/auth.js'
import { consumeQuota } from '../access/quota.js'
import { assertQuotaFits } from '../access/quota-check.js'
import { connectionClass } from './device.js'
import { isSpoofingBeacon } from './ja4-signatures.js'

export interface ParsedAgent {
  os: string | null
  browser: string | null
  mobile: boolean
}

/** The user agent as the server reads it (bowser): OS name, browser name, and whether it is a phone or tablet. */
export function parseUserAgent(ua: string | undefined): ParsedAgent {
  if (!ua) return { os: null, browser: null, mobile: false }
  const p = Bowser.parse(ua.slice(0, 1024))
  const platform = p.platform.type
  return {
    os: p.os.name || null,
    browser: p.browser.name || null,
    mobile: platform === 'mobile' || platform === 'tablet',
  }
}

/** Whether this page origin may use the key: exact match on scheme, host and port. */
export function originAllowed(auth: AuthContext, origin: string | undefined): origin is string {
  return origin !== undefined && auth.origins.includes(origin)
}

export interface BeaconRequestInfo {
  auth: AuthContext
  origin: string | undefined
  ip: string
  userAgent: string | undefined
  /** JA4 of the connection (src/tls/request.ts `ja4FromRequest`), null when there is none to believe. */
  ja4: string | null
}

/**
 * Records one beacon: the page's fingerprint hash and integrity results, plus what verdict itself saw of
 * the browser (its IP, hashed; its user agent, parsed). Answers the ids the page hands to its backend.
 */
export async function recordBeacon(
  ctx: TenantContext,
  req: BeaconRequestInfo,
  body: BeaconBody,
): Promise<BeaconReply> {
  if (!originAllowed(req.auth, req.origin)) {
    throw new ApiError(
      'forbidden',
      req.origin === undefined
        ? 'the beacon needs an Origin header'
        : `origin ${req.origin} is not allowed for this key`,
    )
  }
  const ip = parseIp(req.ip)
  // Classed like a scored event's IP, so the beacon is a point on the device's timeline.
  const connection = connectionClass(ip ? ctx.intel.ip.lookupParsed(ip) : null)
  const agent = parseUserAgent(req.userAgent)
  const visitId = `vis_${randomToken(16)}`
  // A beacon is a write anybody holding the public key can make: metered like a scored event.
  await assertQuotaFits(ctx, 1)
  const now = ctx.clock.now()
  await ctx.store.beacons.add({
    tenantId: ctx.tenant.id,
    deviceId: body.device_id,
    visitId,
    // A watch beacon joins the session of the watch's first visit; any other beacon opens its own.
    sessionId: body.watch_of ?? visitId,
    createdMs: now,
    ipHash: ip ? ctx.hasher.entity('ip', ip.ip) : null,
    netHash: ip ? networkHash(ctx, ip) : null,
    meter: consumeQuota(ctx, 1, now),
    connection,
    ...agent,
    flags: { ...body.device },
    ja4: req.ja4,
    spoofing: isSpoofingBeacon(body.device),
  })
  return { device_id: body.device_id, visit_id: visitId }
}

/** A beacon older than this no longer describes the device a score is about. */
export const BEACON_JOIN_WINDOW_MS = 30 * 60_000

/** The network a beacon binds to: IPv4 /24, IPv6 /64 (one household, office or phone's address block). */
export function networkOf(ip: ParsedIp): string {
  return block64(ip) ?? ip.prefix
}

function networkHash(ctx: TenantContext, ip: ParsedIp): string {
  return ctx.hasher.mac('beacon-network', networkOf(ip)).toString('hex')
}

/**
 * The beacon a score uses: this tenant's, of this fingerprint, within the join window, and sent from
 * the score's IP or its network (a forged beacon from elsewhere never counts, docs/security.md). With
 * the `visit_id` the page got, that visit only; without, the newest from the score's network. A score
 * without an IP has nothing to bind a beacon to and uses none.
 */
export function* bindBeacon(
  ctx: TenantContext,
  score: {
    deviceId: string | null
    /** The score's address as ipInput parsed it and its keyed hash (both null without a usable IP). */
    ip: ParsedIp | null
    ipHash: string | null
    visitId: string | null
  },
  now: number,
): Work<BeaconObservation | null> {
  const { ip, ipHash } = score
  if (score.deviceId === null || ip === null || ipHash === null) return null
  const from = { ipHash, netHash: networkHash(ctx, ip) }
  const since = now - BEACON_JOIN_WINDOW_MS
  return (
    (yield* ctx.store.beacons.forScore(ctx.tenant.id, score.deviceId, since, from, score.visitId)) ?? null
  )
}

/**
 * The watch session whose beacons a score's device timeline reads: the session of the visit the score
 * names (`visit_id`), of this tenant and fingerprint, within the timeline window. Unlike the bound
 * beacon it does not need the score's network: a VPN switched on mid-session is what it is for. A
 * score without `visit_id` reads no beacon points.
 */
export function* beaconSession(
  ctx: TenantContext,
  score: { deviceId: string | null; visitId: string | null },
  sinceMs: number,
): Work<string | null> {
  if (score.deviceId === null || score.visitId === null) return null
  return yield* ctx.store.beacons.sessionOf(ctx.tenant.id, score.deviceId, score.visitId, sinceMs)
}

/** A finding is `true`, except for `ua_consistent`, where the finding is `false`. */
const finding = (flag: BeaconFlag, v: boolean) => (flag === 'ua_consistent' ? !v : v)

/**
 * The device flags a score uses: the request's own, completed by what the browser itself reported in
 * its beacon. A flag the backend did not forward comes from the beacon; when both carry it, a finding
 * on either side counts (the backend cannot clear what the browser reported, nor the other way round).
 * The antidetect verdict is the higher of the two.
 */
export function mergeDeviceFlags(
  request: DeviceFlags | undefined,
  beacon: BeaconObservation | null,
): DeviceFlags | null {
  if (!beacon) return request ?? null
  const b = beacon.flags as Partial<BeaconDevice>
  const out: DeviceFlags = { ...request }
  for (const flag of BEACON_FLAGS) {
    const bv = b[flag]
    if (typeof bv !== 'boolean') continue
    const rv = out[flag]
    out[flag] = rv === undefined || finding(flag, bv) ? bv : rv
  }
  if (typeof b.antidetect_score === 'number' && b.antidetect_score > (out.antidetect_score ?? -1)) {
    out.antidetect_score = b.antidetect_score
    if (b.antidetect_confidence) out.antidetect_confidence = b.antidetect_confidence
  }
  return out
}
