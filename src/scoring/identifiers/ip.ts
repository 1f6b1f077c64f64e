import type { Reputation } from '../network-signals.js'
import type { IpSignals } from '../types.js'
import { capitalise, clampScore, IDENTIFIER_WEIGHTS, listPhrase } from './weights.js'

/** What the scorer reads of an address's reference data (the IP intelligence's result has this shape). */
export interface IpFacts extends Omit<IpSignals, 'org' | 'geoCountry'> {
  isp: string | null
  country: string | null
  city: string | null
  /** Whether the list behind each signal is loaded. */
  known: { tor: boolean; vpn: boolean; proxy: boolean; relay: boolean }
}

export interface IpResult {
  fraud_score: number
  is_datacenter: boolean
  datacenter_provider: string | null
  is_proxy: boolean
  is_tor: boolean
  is_vpn: boolean
  vpn_provider: string | null
  is_privacy_relay: boolean
  country: string | null
  city: string | null
  /** The AS organisation name: no free offline ISP database exists. */
  isp: string | null
  asn: number | null
  recent_abuse: boolean
}

/** Warnings for feeds with no data loaded: the matching signal is unknown, not negative. */
export function feedWarnings(ip: Pick<IpFacts, 'known'>): string[] {
  const out: string[] = []
  for (const [feed, known] of Object.entries(ip.known)) {
    if (!known) out.push(`${feed}_feed_not_loaded: ${feed} detection is unknown until the feed is loaded`)
  }
  return out
}

export function ipResult(
  ip: IpFacts,
  rep: Reputation,
): { result: IpResult; summary: string; warnings: string[] } {
  const w = IDENTIFIER_WEIGHTS.ip
  // A privacy-relay egress is never also datacenter, proxy or VPN; a named VPN operator's exit is a VPN,
  // not also a datacenter (as in the event score).
  const relay = ip.isPrivacyRelay
  const dc = !relay && ip.isDatacenter && !(ip.isVpn && ip.vpnProvider)
  const tor = !relay && ip.isTor
  const vpn = !relay && ip.isVpn
  const proxy = !relay && ip.isProxy
  let score = 0
  const bad: string[] = []
  if (tor) {
    score += w.tor
    bad.push('Tor exit node')
  }
  if (proxy) {
    score += w.proxy
    bad.push('known proxy')
  }
  if (vpn) {
    score += w.vpn
    bad.push(ip.vpnProvider ? `VPN exit (${ip.vpnProvider})` : 'VPN exit')
  }
  if (dc) {
    score += w.datacenter
    bad.push(ip.datacenterProvider ? `hosting network (${ip.datacenterProvider})` : 'hosting network')
  }
  if (rep.honeypot_hits > 0) {
    score += w.honeypot
    bad.push(`caught by abuse traps ${rep.honeypot_hits} time${rep.honeypot_hits === 1 ? '' : 's'}`)
  }
  if (rep.network_operators > 0) {
    score += w.recentAbuse
    bad.push('recently flagged in the operator network')
  }
  const result: IpResult = {
    fraud_score: clampScore(score),
    is_datacenter: dc,
    datacenter_provider: dc ? ip.datacenterProvider : null,
    is_proxy: proxy,
    is_tor: tor,
    is_vpn: vpn,
    vpn_provider: vpn ? ip.vpnProvider : null,
    is_privacy_relay: relay,
    country: ip.country,
    city: ip.city,
    isp: ip.isp,
    asn: ip.asn,
    recent_abuse: rep.recent_abuse,
  }
  const where = [
    ip.isp ? `${ip.isp}${ip.asn ? ` (AS${ip.asn})` : ''}` : null,
    ip.country ? `in ${ip.country}` : null,
  ]
    .filter(Boolean)
    .join(' ')
  const summary = bad.length
    ? `${capitalise(listPhrase(bad))}${where ? `; ${where}` : ''}; fraud score ${result.fraud_score}.`
    : `${relay ? 'Private-relay egress' : 'Ordinary network address'}${where ? ` of ${where}` : ''}; no risk signals.`
  return { result, summary, warnings: feedWarnings(ip) }
}
