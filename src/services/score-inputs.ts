import type { Static } from '@fastify/type-provider-typebox'
import type { EmailAnalysis } from '../intel/email/index.js'
import type { IpIntelResult } from '../intel/ip/index.js'
import { parseIp } from '../intel/ip/normalize.js'
import type { ScoreRequest } from '../schemas/score.js'
import type { ConfigOverrides, ScoringConfig } from '../scoring/config.js'
import { effectiveConfig } from '../scoring/config.js'
import { feedWarnings } from '../scoring/identifiers/ip.js'
import type { NetworkSignals } from '../scoring/network.js'
import type { DeviceFlags, EmailSignals, IpSignals, ListMatch } from '../scoring/types.js'
import type { Overrides } from '../store/config.js'
import type { ListType } from '../store/lists.js'
import type { TenantCtx } from './context.js'
import { type DeviceResolution, resolveDevice } from './device.js'
import { emailKey, type IdentifierDeps, mxStatus, phoneKey } from './identifiers.js'
import { type AsnRates, gatherNetwork } from './network.js'

export type ScoreBody = Static<typeof ScoreRequest>

/** Everything about one event that does not depend on the tenant's history, gathered before the write. */
export interface PreparedEvent {
  body: ScoreBody
  userId: string | null
  deviceId: string | null
  ip: IpIntelResult | null
  ipHash: string | null
  ipSignals: IpSignals | null
  email: EmailAnalysis | null
  emailHash: string | null
  emailSignals: EmailSignals | null
  phoneHash: string | null
  phoneCountry: string | null
  timezone: { zone: string; countries: string[] | null } | null
  lists: ListMatch[]
  config: ScoringConfig
  /** Device resolution (token, rung, identity); history is read later, on the write transaction. */
  device: DeviceResolution
  network: NetworkSignals
  warnings: string[]
}

/** Empty strings count as absent. */
const present = (s: string | undefined): string | null =>
  s === undefined || s.trim() === '' ? null : s.trim()

function ipSignals(ip: IpIntelResult): IpSignals {
  return {
    asn: ip.asn,
    org: ip.org,
    geoCountry: ip.country,
    isDatacenter: ip.isDatacenter,
    datacenterProvider: ip.datacenterProvider,
    isTor: ip.isTor,
    isVpn: ip.isVpn,
    vpnProvider: ip.vpnProvider,
    isProxy: ip.isProxy,
    isPrivacyRelay: ip.isPrivacyRelay,
  }
}

type Ctx = TenantCtx & IdentifierDeps & { asnRates: AsnRates }

/** Reference lookups (in memory), the MX lookup (cached DNS), list matches and the tenant config. */
export async function prepareEvent(ctx: Ctx, body: ScoreBody, overrides?: Overrides): Promise<PreparedEvent> {
  const warnings: string[] = []
  const userId = present(body.user_id)
  const deviceId = present(body.device_id)
  const listKeys: { type: ListType; valueKey: string }[] = []
  if (userId) listKeys.push({ type: 'user', valueKey: userId })
  if (deviceId) listKeys.push({ type: 'device', valueKey: deviceId })

  let ip: IpIntelResult | null = null
  let ipHash: string | null = null
  const rawIp = present(body.ip)
  if (rawIp) {
    const parsed = parseIp(rawIp)
    ip = parsed ? ctx.intel.ip.lookup(parsed.ip) : null
    if (!parsed || !ip) warnings.push('ip_invalid: the ip field is not an IP address; IP checks were skipped')
    else {
      ipHash = ctx.hasher.entity('ip', parsed.ip)
      listKeys.push({ type: 'ip', valueKey: ipHash })
      warnings.push(...feedWarnings(ip))
    }
  }

  let email: EmailAnalysis | null = null
  let emailHash: string | null = null
  let emailSignals: EmailSignals | null = null
  const rawEmail = present(body.email)
  if (rawEmail) {
    email = ctx.intel.email.analyze(rawEmail)
    emailHash = ctx.hasher.entity('email', emailKey(email, rawEmail).key)
    listKeys.push({ type: 'email', valueKey: emailHash })
    if (email.malformed || !email.domain) {
      warnings.push(`email_malformed: ${email.rejectReason ?? 'unusable address'}; email checks were skipped`)
    } else {
      const mx = await mxStatus(ctx.intel, email)
      if (mx === 'unknown')
        warnings.push('email_mx_unknown: DNS did not answer in time; email_no_mx was not evaluated')
      if (mx === 'not_checked')
        warnings.push(
          'email_mx_not_checked: the domain is not under a public suffix; email_no_mx was not evaluated',
        )
      emailSignals = {
        domain: email.domain,
        isDisposable: email.isDisposable,
        looksGibberish: email.looksGibberish,
        gibberishScore: email.gibberishScore,
        hasPlusTag: email.hasPlusTag,
        mx: mx === 'none' ? 'none' : mx === 'valid' ? 'valid' : 'unknown',
      }
    }
  }

  let phoneHash: string | null = null
  let phoneCountry: string | null = null
  const rawPhone = present(body.phone)
  if (rawPhone) {
    const p = ctx.intel.phone.analyze(rawPhone, present(body.phone_country) ?? undefined)
    phoneHash = ctx.hasher.entity('phone', phoneKey(p, rawPhone))
    phoneCountry = p.country ?? present(body.phone_country)?.toUpperCase() ?? null
  }

  const zone = present(body.timezone)
  const timezone = zone ? { zone, countries: ctx.intel.timezoneCountries(zone) } : null

  const now = ctx.clock.now()
  const [matches, stored, device, network] = await Promise.all([
    ctx.store.lists.match(ctx.tenant.id, listKeys),
    overrides ? Promise.resolve(overrides) : ctx.store.config.cachedOverrides(ctx.tenant.id),
    resolveDevice(ctx, { fingerprint: deviceId, token: present(body.device_token), ip }),
    gatherNetwork(ctx, { ipHash, emailHash, deviceId, userId, asn: ip?.asn ?? null }, now),
  ])
  return {
    body,
    userId,
    deviceId,
    ip,
    ipHash,
    ipSignals: ip ? ipSignals(ip) : null,
    email,
    emailHash,
    emailSignals,
    phoneHash,
    phoneCountry,
    timezone,
    lists: matches.map((m) => ({ list: m.list, type: m.type })),
    config: effectiveConfig(stored as ConfigOverrides),
    device,
    network,
    warnings,
  }
}

export const deviceFlags = (p: PreparedEvent): DeviceFlags | null =>
  (p.body.device as DeviceFlags | undefined) ?? null
