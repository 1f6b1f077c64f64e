import type { Check, CheckFamily, EngineInput } from '../types.js'
import { fire } from './fire.js'

/** The IP's country as far as we know it: the caller's own header first, then geolocation. */
export function effectiveIpCountry(input: EngineInput): string | null {
  return (input.ipCountry ?? input.ip?.geoCountry ?? null)?.toUpperCase() ?? null
}

/**
 * Network checks. A privacy-relay egress is reported (weight 0) and never also counted as datacenter,
 * proxy or VPN: relay users are ordinary customers of a platform vendor. An exit of a nameable VPN
 * operator is reported as that VPN only: its servers sit in hosting networks by construction, so
 * `datacenter_ip` would count the one fact twice (docs/scoring.md).
 */
export const ipRisk: CheckFamily = (input) => {
  const out: Check[] = []
  const ip = input.ip
  const w = input.config.weights
  if (ip?.isPrivacyRelay) {
    out.push(
      fire('privacy_relay', {
        key: 'privacyRelay',
        weight: w.privacyRelay,
        message: "The IP address is an egress of a platform vendor's private relay service.",
        evidence: { asn: ip.asn, org: ip.org },
      }),
    )
  } else if (ip) {
    const namedVpn = ip.isVpn && ip.vpnProvider !== null
    if (ip.isDatacenter && !namedVpn) {
      out.push(
        fire('datacenter_ip', {
          key: 'datacenterIp',
          weight: w.datacenterIp,
          message: ip.datacenterProvider
            ? `The IP address belongs to a hosting provider (${ip.datacenterProvider}), not a consumer network.`
            : 'The IP address belongs to a hosting or cloud network, not a consumer network.',
          evidence: { asn: ip.asn, org: ip.org, provider: ip.datacenterProvider },
        }),
      )
    }
    // At most one of vpn_ip / proxy_ip: a nameable VPN operator makes it a VPN, anything else a proxy.
    if (namedVpn) {
      out.push(
        fire('vpn_ip', {
          key: 'proxyVpn',
          weight: w.proxyVpn,
          message: `The IP address is an exit of a commercial VPN (${ip.vpnProvider}).`,
          evidence: { asn: ip.asn, provider: ip.vpnProvider },
        }),
      )
    } else if (ip.isVpn || ip.isProxy || ip.isTor) {
      out.push(
        fire('proxy_ip', {
          key: 'proxyVpn',
          weight: w.proxyVpn,
          message: ip.isTor
            ? 'The IP address is a Tor exit node.'
            : 'The IP address is a known proxy or anonymising exit.',
          evidence: { asn: ip.asn, tor: ip.isTor, proxy: ip.isProxy, vpn: ip.isVpn },
        }),
      )
    }
  }
  const expected = input.eventCountry?.toUpperCase() ?? null
  const actual = effectiveIpCountry(input)
  if (expected && actual && expected !== actual) {
    out.push(
      fire('geo_mismatch', {
        key: 'geoMismatch',
        weight: w.geoMismatch,
        message: `The IP address is in ${actual}, but the event was expected from ${expected}.`,
        evidence: {
          expected_country: expected,
          ip_country: actual,
          ip_country_source: input.ipCountry ? 'request' : 'geolocation',
        },
      }),
    )
  }
  return out
}
