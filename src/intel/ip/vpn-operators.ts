/**
 * Networks that VPN operators themselves hold: the AS is registered to the operator (or to the
 * company the operator names as its own), so every address announced from it is the operator's.
 * This flags `is_vpn` on a fresh or offline install, before any feed is downloaded.
 *
 * Rule for an entry: the AS number and its holder were checked against the bundled
 * `@ip-location-db/asn` data (test/intel/vpn-operators.test.ts re-checks both on every run, so a
 * data update that hands the number to someone else fails the suite), and a document names that
 * holder or that number as the operator's. A hosting company that rents servers to VPN operators
 * (M247, Datacamp/CDN77, Leaseweb, ...) is never listed: its other customers are ordinary sites.
 * Networks we could not attribute from a source stay out; the `vpn` and `vpn-asn` feeds cover them.
 */

export interface VpnOperatorNetwork {
  /** Name reported as `vpn_provider`. */
  operator: string
  asn: number
  /** AS holder exactly as the bundled ASN data spells it. */
  org: string
  /** Documents naming this network as the operator's. */
  sources: readonly string[]
}

export const VPN_OPERATOR_NETWORKS: readonly VpnOperatorNetwork[] = [
  {
    operator: 'Mullvad VPN',
    asn: 39351,
    org: '31173 Services AB',
    sources: [
      // Mullvad's own relay list names the provider of the servers it owns "31173".
      'https://api.mullvad.net/www/relays/all (servers Mullvad owns: provider "31173")',
      'https://github.com/X4BNet/lists_vpn/issues/177 (AS216025 and AS39351 as Mullvad)',
    ],
  },
  {
    operator: 'Mullvad VPN',
    asn: 216025,
    org: 'Mullvad VPN AB',
    sources: [
      'Registry holder is the operator itself (Mullvad VPN AB, https://mullvad.net/en/policies)',
      'https://github.com/X4BNet/lists_vpn/issues/177 (AS216025 and AS39351 as Mullvad)',
    ],
  },
  {
    operator: 'Proton VPN',
    asn: 209103,
    org: 'Proton AG',
    sources: [
      // "Proton owned servers can be identified by IP addresses which identify Proton AG as the
      // internet service provider."
      'https://protonvpn.com/privacy-policy (Proton-owned VPN servers have Proton AG as their ISP)',
      'Registry holder of AS209103: Proton AG',
    ],
  },
  {
    operator: 'Proton VPN',
    asn: 208172,
    org: 'Proton AG',
    sources: [
      'https://protonvpn.com/privacy-policy (Proton-owned VPN servers have Proton AG as their ISP)',
      'https://github.com/X4BNet/lists_vpn/issues/248 (AS208172 PV-HOSTED as Proton VPN)',
    ],
  },
  {
    operator: 'IVPN',
    asn: 203619,
    org: 'IVPN Limited',
    sources: [
      'https://www.ivpn.net/trust (legal name of the operator: IVPN Limited, no other companies involved)',
      'Registry holder of AS203619: IVPN Limited',
    ],
  },
  {
    operator: 'Windscribe',
    asn: 397540,
    org: 'Windscribe',
    sources: ['Registry holder of AS397540 (ARIN): Windscribe, the operator itself (https://windscribe.com)'],
  },
]

const BY_ASN: ReadonlyMap<number, VpnOperatorNetwork> = new Map(VPN_OPERATOR_NETWORKS.map((n) => [n.asn, n]))

/**
 * The operator owning `asn`, when the table lists it. `org` is the holder the ASN data gives for the
 * address: an entry only applies while the holder is still the one it was checked against.
 */
export function vpnOperatorOf(asn: number | null, org: string | null): string | undefined {
  if (asn === null) return undefined
  const n = BY_ASN.get(asn)
  return n !== undefined && n.org === org ? n.operator : undefined
}
