import type { RequestContext } from '../../context.js'
import type { EmailAnalysis } from '../../intel/email/index.js'
import type { IpIntelResult } from '../../intel/ip/index.js'
import { block64, type ParsedIp, parseIp } from '../../intel/ip/normalize.js'
import { feedWarnings } from '../../scoring/identifiers/ip.js'
import type { EmailSignals, IpSignals } from '../../scoring/types.js'
import type { ListKey, RangeKeys } from '../../store/rules/lists.js'
import { emailKey, mxStatus, phoneKey } from '../identifiers/evaluate.js'
import { ipRangeKeys } from '../rules/lists.js'

/**
 * What one identifier of a scored event contributes, before the write. Each identifier is prepared on
 * its own: a new one is a function here and a field of PreparedEvent (score-inputs.ts).
 */
export interface IdentifierInput<S> {
  /** The keyed hash it is stored, listed and shared under; null when the value is unusable. */
  hash: string | null
  /** What the engine reads about it; null when unusable. */
  signals: S | null
  /** The key the tenant's lists are matched under; null when unusable or not listable. */
  listKey: ListKey | null
  /** Why some checks could not be evaluated (`code: explanation`). */
  warnings: readonly string[]
}

export interface IpInput extends IdentifierInput<IpSignals> {
  /** The address parsed once, for whatever else of the event reads it (the beacon binding); null when unusable. */
  parsed: ParsedIp | null
  /** The reference-data lookup (network, geolocation, feeds). */
  lookup: IpIntelResult | null
  /** IPv6: the keyed hash of its /64, which velocity counts under (a rotating address stays one block). */
  blockHash: string | null
  /** The keys of the tenant's CIDR entries this address falls in; null when unusable. */
  rangeKeys: RangeKeys | null
}

export interface EmailInput extends IdentifierInput<EmailSignals> {
  analysis: EmailAnalysis
}

/** A phone is stored (hash and country) and listable but not scored; tenant rules read its facts. */
export interface PhoneInput extends IdentifierInput<never> {
  country: string | null
  lineType: string | null
  isVoip: boolean
  isDisposable: boolean
}

/** Shared by every identifier without warnings, so the common case allocates no array. */
const NONE: readonly string[] = Object.freeze([])
const IP_INVALID = Object.freeze(['ip_invalid: the ip field is not an IP address; IP checks were skipped'])
const MX_UNKNOWN = Object.freeze([
  'email_mx_unknown: DNS did not answer in time; email_no_mx was not evaluated',
])
const MX_NOT_CHECKED = Object.freeze([
  'email_mx_not_checked: the domain is not under a public suffix; email_no_mx was not evaluated',
])

/** Why the MX answer is open: a slow DNS, or a resolver known to be broken (its canary fails). */
function mxUnknown(ctx: RequestContext): readonly string[] {
  const r = ctx.intel.email.lastResolverHealth()
  if (r.status !== 'broken' && r.status !== 'unreachable') return MX_UNKNOWN
  return [
    `email_mx_unknown: the DNS resolver cannot resolve ${r.canary} (VERDICT_DNS_CANARY), a name that must exist, so its "no mail server" answers are not believed; email_no_mx was not evaluated`,
  ]
}

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

/** Reference lookup (in memory); an unparseable address skips the IP checks with a warning. */
export function ipInput(ctx: RequestContext, raw: string): IpInput {
  const parsed = parseIp(raw)
  if (!parsed)
    return {
      parsed: null,
      lookup: null,
      hash: null,
      blockHash: null,
      signals: null,
      listKey: null,
      rangeKeys: null,
      warnings: IP_INVALID,
    }
  const lookup = ctx.intel.ip.lookupParsed(parsed)
  const hash = ctx.hasher.entity('ip', parsed.ip)
  const block = block64(parsed)
  const warnings = feedWarnings(lookup)
  return {
    parsed,
    lookup,
    hash,
    blockHash: block === null ? null : ctx.hasher.mac('ip-block', block).toString('hex'),
    signals: ipSignals(lookup),
    listKey: { type: 'ip', valueKey: hash },
    rangeKeys: ipRangeKeys(ctx.hasher, parsed),
    warnings: warnings.length ? warnings : NONE,
  }
}

/**
 * Analysis (in memory) and the mail-server status (cached DNS). A malformed address is still hashed
 * and listed under its lower-cased text, but its checks are skipped with a warning.
 */
export async function emailInput(ctx: RequestContext, raw: string): Promise<EmailInput> {
  const analysis = ctx.intel.email.analyze(raw)
  const hash = ctx.hasher.entity('email', emailKey(analysis, raw).key)
  const listKey: ListKey = { type: 'email', valueKey: hash }
  if (analysis.malformed || !analysis.domain) {
    const why = `email_malformed: ${analysis.rejectReason ?? 'unusable address'}; email checks were skipped`
    return { analysis, hash, signals: null, listKey, warnings: [why] }
  }
  const mx = await mxStatus(ctx.intel, analysis)
  return {
    analysis,
    hash,
    listKey,
    warnings: mx === 'unknown' ? mxUnknown(ctx) : mx === 'not_checked' ? MX_NOT_CHECKED : NONE,
    signals: {
      domain: analysis.domain,
      isDisposable: analysis.isDisposable,
      relay: analysis.relay,
      looksGibberish: analysis.looksGibberish,
      gibberishScore: analysis.gibberishScore,
      hasPlusTag: analysis.hasPlusTag,
      mx: mx === 'none' ? 'none' : mx === 'valid' ? 'valid' : 'unknown',
    },
  }
}

/** Hashed under its E.164 form when it parses; its country is the parsed one, else the caller's hint. */
export function phoneInput(ctx: RequestContext, raw: string, countryHint: string | null): PhoneInput {
  const p = ctx.intel.phone.analyze(raw, countryHint ?? undefined)
  const hash = ctx.hasher.entity('phone', phoneKey(p, raw))
  return {
    hash,
    country: p.country ?? countryHint?.toUpperCase() ?? null,
    lineType: p.lineType,
    isVoip: p.isVoip,
    isDisposable: p.isDisposable,
    signals: null,
    listKey: { type: 'phone', valueKey: hash },
    warnings: NONE,
  }
}
