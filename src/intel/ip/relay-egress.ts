/**
 * Egress prefixes of iCloud Private Relay, bundled so a fresh or offline install recognises the relay
 * before any `relay` feed is downloaded. The relay's egress is run by Cloudflare, Akamai and Fastly,
 * whose networks otherwise read as hosting: without this table every relay user on Cloudflare or
 * Fastly was a `datacenter_ip`.
 *
 * Derived from Apple's published list (https://mask-api.icloud.com/egress-ip-ranges.csv) as of
 * RELAY_EGRESS_DATE, read through a public mirror of it (github.com/rezmoss/cloud-provider-ip-addresses,
 * apple_private_relay/, generated 2026-06-29 with content unchanged to 2026-07-02). Apple's list has
 * ~287,000 entries down to single addresses; this table keeps each operator's blocks that hold them:
 *
 * - Cloudflare IPv4: exactly the /24s Apple lists (104.28.28-40, 42-72, 76-151), no wider. Cloudflare's
 *   WARP (a free VPN anyone can run, also on a rented server) egresses from other parts of the same
 *   104.28.0.0/16 (seen at 104.28.195.x, .207.x and .227.x) and Cloudflare does not publish WARP's
 *   ranges, so the rest of the /16, and all of AS13335, stays hosting.
 * - Cloudflare IPv6: the /32s Apple allocates a /45 per relay region in (2606:54c0::/32,
 *   2a09:bac2::/32, 2a09:bac3::/32) and the /48 of its per-region /64s (2606:54c3::/48). WARP was seen
 *   in 2a09:bac1::/32 and 2a09:bac5::/32, Workers egress at 2a06:98c0:3600::103: both stay hosting.
 * - Fastly: 140.248.0.0/18, 146.75.128.0/17 and 2a04:4e41::/32, which hold all of Apple's Fastly
 *   entries and are exactly the parts of those blocks missing from Fastly's own published address
 *   list (api.fastly.com/public-ip-list: 140.248.64.0/18, 140.248.128.0/17, 146.75.0.0/17,
 *   2a04:4e40::/32, 2a04:4e42::/32, the addresses its CDN connects from).
 * - Akamai: the span of Apple's Akamai entries, 172.224.224.0 to 172.226.226.255 (172.224.224.0/27 was
 *   listed in 2025, the 2026 list starts at 172.224.226.0), and 2a02:26f7:b000:: to the end of
 *   2a02:26f7::/32. Akamai's dedicated relay network AS36183 announces nothing but parts of these
 *   blocks; the rest of them is announced by AS20940 and carried relay users all the same (Apple lists
 *   e.g. 172.224.232.0/27 and the 2a02:26f7:XXXX:4000::/64s, in AS20940). About a quarter of the /24s in
 *   the span were not in the 2026-06-29 list; nothing else is documented there.
 *
 * A configured `relay` feed is added to this table, never replaced by it (src/intel/ip/index.ts).
 * Refresh: take Apple's current CSV, check every entry falls in a block below and that no block has
 * become another service's, and move the date. test/intel/relay-egress.test.ts pins the boundaries.
 */
import { parseCidr as parseStrict } from './cidr.js'
import type { ParsedIp } from './normalize.js'
import { type IpRange, parseCidr, RangeSet } from './ranges.js'

/** Date of Apple's list the table was checked against. */
export const RELAY_EGRESS_DATE = '2026-06-29'

export interface RelayEgressBlocks {
  operator: 'Cloudflare' | 'Akamai' | 'Fastly'
  prefixes: readonly string[]
}

export const RELAY_EGRESS: readonly RelayEgressBlocks[] = [
  {
    operator: 'Cloudflare',
    prefixes: [
      '104.28.28.0/22',
      '104.28.32.0/21',
      '104.28.40.0/24',
      '104.28.42.0/23',
      '104.28.44.0/22',
      '104.28.48.0/20',
      '104.28.64.0/21',
      '104.28.72.0/24',
      '104.28.76.0/22',
      '104.28.80.0/20',
      '104.28.96.0/19',
      '104.28.128.0/20',
      '104.28.144.0/21',
      '2606:54c0::/32',
      '2606:54c3::/48',
      '2a09:bac2::/32',
      '2a09:bac3::/32',
    ],
  },
  {
    operator: 'Akamai',
    prefixes: [
      '172.224.224.0/19',
      '172.225.0.0/16',
      '172.226.0.0/17',
      '172.226.128.0/18',
      '172.226.192.0/19',
      '172.226.224.0/23',
      '172.226.226.0/24',
      '2a02:26f7:b000::/36',
      '2a02:26f7:c000::/34',
    ],
  },
  {
    operator: 'Fastly',
    prefixes: ['140.248.0.0/18', '146.75.128.0/17', '2a04:4e41::/32'],
  },
]

function ranges(): Array<IpRange & { label: string }> {
  const out: Array<IpRange & { label: string }> = []
  for (const { operator, prefixes } of RELAY_EGRESS) {
    for (const p of prefixes) {
      // Strict parse first: a typo with host bits set must fail, not be silently widened.
      const strict = parseStrict(p)
      const r = parseCidr(p)
      if (typeof strict === 'string' || !r) throw new Error(`relay-egress: ${p}: ${strict}`)
      out.push({ ...r, label: operator })
    }
  }
  return out
}

/** The table as a lookup set; the label is the operator running the egress. */
export const RELAY_EGRESS_SET = new RangeSet(ranges())

/** The operator whose relay egress block holds `ip`, or undefined. */
export function relayEgressOperator(ip: ParsedIp): string | undefined {
  return RELAY_EGRESS_SET.match(ip) ?? undefined
}
