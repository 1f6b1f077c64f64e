import Bowser from 'bowser'
import type { BeaconBody, BeaconReply } from '../beacon/contract.js'
import type { TenantContext } from '../context.js'
import { ApiError } from '../errors.js'
import { parseIp } from '../intel/ip/normalize.js'
import { randomToken } from '../util/secrets.js'
import type { AuthContext } from './auth.js'

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
  const agent = parseUserAgent(req.userAgent)
  const visitId = `vis_${randomToken(16)}`
  await ctx.store.beacons.add({
    tenantId: ctx.tenant.id,
    deviceId: body.device_id,
    visitId,
    createdMs: ctx.clock.now(),
    ipHash: ip ? ctx.hasher.entity('ip', ip.ip) : null,
    ...agent,
    flags: { ...body.device },
  })
  return { device_id: body.device_id, visit_id: visitId }
}
