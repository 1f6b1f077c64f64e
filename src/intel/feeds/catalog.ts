/**
 * The refreshable feeds. Range feeds hold CIDRs (IPv4 and IPv6); ASN feeds hold AS numbers and flag
 * every address announced by them. VPN and proxy each come in both shapes because upstream lists
 * exist in both, and keeping them apart lets each be refreshed and reported on its own.
 */
export const FEED_NAMES = ['tor', 'relay', 'vpn', 'vpn-asn', 'proxy', 'proxy-asn', 'datacenter'] as const
export type FeedName = (typeof FEED_NAMES)[number]

export type FeedFormat = 'ip-list' | 'relay-csv' | 'cidr-list' | 'asn-list'

export interface FeedDef {
  name: FeedName
  kind: 'ranges' | 'asns'
  /** Format of the upstream / imported file. Stored copies are always written as cidr-list or asn-list. */
  format: FeedFormat
  /** Whether a per-entry name (VPN operator, hosting provider) is kept. */
  named: boolean
  description: string
  /** Real upstream sources used when no URL is configured; several are concatenated. */
  defaultUrls: readonly string[]
}

const X4B = 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/output'

export const FEEDS: Readonly<Record<FeedName, FeedDef>> = {
  tor: {
    name: 'tor',
    kind: 'ranges',
    format: 'ip-list',
    named: false,
    description: 'Tor exit relays (Tor Project bulk exit list)',
    defaultUrls: ['https://check.torproject.org/torbulkexitlist'],
  },
  relay: {
    name: 'relay',
    kind: 'ranges',
    format: 'relay-csv',
    named: false,
    description: 'iCloud Private Relay egress ranges (Apple egress-ip-ranges.csv)',
    defaultUrls: ['https://mask-api.icloud.com/egress-ip-ranges.csv'],
  },
  vpn: {
    name: 'vpn',
    kind: 'ranges',
    format: 'cidr-list',
    named: true,
    description: 'VPN exit ranges; `cidr,operator` lines name the operator',
    defaultUrls: [`${X4B}/vpn/ipv4.txt`, `${X4B}/vpn/ipv6.txt`],
  },
  'vpn-asn': {
    name: 'vpn-asn',
    kind: 'asns',
    format: 'asn-list',
    named: true,
    description: 'AS numbers operated by VPN providers; `AS123,operator` lines name the operator',
    defaultUrls: [],
  },
  proxy: {
    name: 'proxy',
    kind: 'ranges',
    format: 'cidr-list',
    named: false,
    description: 'Open and commercial proxy addresses',
    defaultUrls: ['https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/firehol_proxies.netset'],
  },
  'proxy-asn': {
    name: 'proxy-asn',
    kind: 'asns',
    format: 'asn-list',
    named: false,
    description: 'AS numbers of commercial proxy networks',
    defaultUrls: [],
  },
  datacenter: {
    name: 'datacenter',
    kind: 'ranges',
    format: 'cidr-list',
    named: true,
    description:
      'Hosting / cloud provider ranges (CIDR lists and the AWS, Google Cloud and Oracle JSON files)',
    defaultUrls: [
      `${X4B}/datacenter/ipv4.txt`,
      `${X4B}/datacenter/ipv6.txt`,
      'https://ip-ranges.amazonaws.com/ip-ranges.json',
      'https://www.gstatic.com/ipranges/cloud.json',
      'https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json',
    ],
  },
}

export function isFeedName(name: string): name is FeedName {
  return (FEED_NAMES as readonly string[]).includes(name)
}

/** `VERDICT_FEED_<NAME>_URL`, with dashes as underscores (e.g. VERDICT_FEED_VPN_ASN_URL). */
export function feedUrlEnvVar(name: FeedName): string {
  return `VERDICT_FEED_${name.toUpperCase().replace(/-/g, '_')}_URL`
}

/** Largest download accepted per feed URL unless VERDICT_FEED_MAX_BYTES says otherwise. */
export const DEFAULT_FEED_MAX_BYTES = 64 * 1024 * 1024

/** Download URLs per feed, as configured (`settings.feeds.urls`); an empty list means no source. */
export type FeedUrls = Record<FeedName, string[]>
