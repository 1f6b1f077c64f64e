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
import { parseIp } from '../../intel/ip/normalize.js'
import type { DeviceFlags } from '../../scoring/types.js'
import type { BeaconObservation } from '../../store/devices/beacons.js'
import { randomToken } from '../../util/secrets.js'
import type { AuthContext } from '../access/auth.js'
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
  const connection = connectionClass(ip ? ctx.intel.ip.lookup(ip.ip) : null)
  const agent = parseUserAgent(req.userAgent)
  const visitId = `vis_${randomToken(16)}`
  await ctx.store.beacons.add({
    tenantId: ctx.tenant.id,
    deviceId: body.device_id,
    visitId,
    createdMs: ctx.clock.now(),
    ipHash: ip ? ctx.hasher.entity('ip', ip.ip) : null,
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

/** The tenant's latest beacon of this fingerprint within the join window, or null. */
export async function latestBeacon(
  ctx: TenantContext,
  deviceId: string | null,
  now: number,
): Promise<BeaconObservation | null> {
  if (deviceId === null) return null
  return (await ctx.store.beacons.latest(ctx.tenant.id, deviceId, now - BEACON_JOIN_WINDOW_MS)) ?? null
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
