/**
 * Real networks from the bundled ASN data: the simulator picks its addresses inside the announced
 * ranges of named autonomous systems and keeps only those the service's own intelligence classifies
 * as the population intends (a home address must geolocate to the home country and be neither hosting
 * nor VPN; a farm address must be hosting; ...).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { asnPackageDir } from '../../src/intel/ip/asn.js'
import type { IpIntel, IpIntelResult } from '../../src/intel/ip/index.js'
import { RELAY_EGRESS } from '../../src/intel/ip/relay-egress.js'
import type { Rng } from './rng.js'

/** Consumer (fixed line) and mobile access networks per country, checked against the ASN data. */
export const ACCESS: Record<string, { home: number[]; mobile: number[] }> = {
  US: { home: [7922, 7018, 22773, 20115, 701], mobile: [21928, 20057, 22394] },
  CA: { home: [812, 577, 852], mobile: [812, 852] },
  MX: { home: [8151], mobile: [8151] },
  BR: { home: [28573, 18881, 26599], mobile: [26599, 28573] },
  AR: { home: [7303], mobile: [7303] },
  GB: { home: [2856, 5089], mobile: [25135, 2856] },
  DE: { home: [3320, 3209, 6805], mobile: [3320, 6805] },
  FR: { home: [3215, 12322, 21502], mobile: [51207, 3215] },
  ES: { home: [3352, 12479], mobile: [12479, 3352] },
  IT: { home: [3269, 30722], mobile: [30722, 3269] },
  NL: { home: [1136, 33915], mobile: [33915, 1136] },
  PL: { home: [5617], mobile: [5617] },
  SE: { home: [3301], mobile: [3301] },
  TR: { home: [9121], mobile: [9121] },
  IN: { home: [24560, 9829], mobile: [55836, 45609] },
  JP: { home: [4713, 2516, 17676], mobile: [2516, 17676] },
  KR: { home: [4766, 9318], mobile: [4766] },
  ID: { home: [7713], mobile: [23693] },
  PH: { home: [9299], mobile: [132199] },
  VN: { home: [7552, 45899], mobile: [7552] },
  AU: { home: [1221, 4804], mobile: [1221, 4804] },
  NG: { home: [29465], mobile: [29465] },
  ZA: { home: [37457], mobile: [37457] },
  RU: { home: [12389, 25513], mobile: [8359] },
}

export const HOSTING_ASNS = [14061, 16276, 24940, 16509, 20473, 51167, 63949, 8075]
/** VPN operators that run their own AS (the service names them from its built-in table). */
export const VPN_OWN_ASNS = [39351, 209103, 397540]
/** Hosting networks consumer VPNs rent exits in (NordVPN, Surfshark, ... on M247, Datacamp, PacketHub). */
export const VPN_RENTED_ASNS = [9009, 60068, 212238, 136787]
export const ZSCALER_ASNS = [22616, 53813, 62044]
/**
 * iCloud Private Relay egress of Akamai and Cloudflare: the IPv4 blocks of Apple's published egress
 * list (the service's bundled table, src/intel/ip/relay-egress.ts), not all of the operators' ASes.
 * Cloudflare's other addresses (WARP, Workers, its CDN) are no relay.
 */
export const RELAY_PREFIXES = {
  akamai: relayV4('Akamai'),
  cloudflare: relayV4('Cloudflare'),
}

/**
 * Cloudflare addresses that are not relay egress and must stay hosting: WARP egress seen in use
 * (IPv4 and IPv6) and the shared address Workers' cross-zone subrequests come from.
 */
export const CLOUDFLARE_NOT_RELAY = [
  '104.28.207.215',
  '104.28.227.185',
  '2a09:bac1:76c0:540::281:54',
  '2a06:98c0:3600::103',
]

interface Range4 {
  start: number
  size: number
}

function relayV4(operator: string): Range4[] {
  const blocks = RELAY_EGRESS.find((b) => b.operator === operator)!.prefixes.filter((p) => !p.includes(':'))
  return blocks.map((p) => {
    const [addr, len] = p.split('/') as [string, string]
    return { start: ip4ToNum(addr), size: 2 ** (32 - Number(len)) }
  })
}
interface Range6 {
  /** First four 16-bit groups of the range start (the /64). */
  head: bigint
  span: bigint
}

function ip4ToNum(s: string): number {
  const p = s.split('.').map(Number)
  return ((p[0]! << 24) >>> 0) + (p[1]! << 16) + (p[2]! << 8) + p[3]!
}
function numToIp4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`
}
function ip6ToBig(s: string): bigint {
  const [a, b] = s.split('::') as [string, string | undefined]
  const head = a ? a.split(':') : []
  const tail = b ? b.split(':') : []
  const groups =
    b === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail]
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g || '0', 16)), 0n)
}
function bigToIp6(v: bigint): string {
  const g: string[] = []
  for (let i = 7; i >= 0; i--) g.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16))
  return g.join(':')
}

export type Want = 'residential' | 'hosting' | 'vpn' | 'any'

/** Address pools of the networks the simulator uses, verified against the service's classification. */
export class Networks {
  private readonly v4 = new Map<number, Range4[]>()
  private readonly v6 = new Map<number, Range6[]>()

  constructor(
    private readonly intel: IpIntel,
    asns: Iterable<number>,
  ) {
    const wanted = new Set(asns)
    const dir = asnPackageDir()
    for (const line of readFileSync(join(dir, 'asn-ipv4.csv'), 'utf8').split('\n')) {
      const [s, e, a] = line.split(',')
      const asn = Number(a)
      if (!wanted.has(asn)) continue
      const start = ip4ToNum(s!)
      const size = ip4ToNum(e!) - start + 1
      if (size < 256) continue
      const list = this.v4.get(asn) ?? []
      list.push({ start, size })
      this.v4.set(asn, list)
    }
    for (const line of readFileSync(join(dir, 'asn-ipv6.csv'), 'utf8').split('\n')) {
      const [s, e, a] = line.split(',')
      const asn = Number(a)
      if (!wanted.has(asn)) continue
      const start = ip6ToBig(s!) >> 64n
      const span = (ip6ToBig(e!) >> 64n) - start + 1n
      if (span < 256n) continue
      const list = this.v6.get(asn) ?? []
      list.push({ head: start, span })
      this.v6.set(asn, list)
    }
  }

  private ok(r: IpIntelResult | null, want: Want, country?: string): boolean {
    if (!r) return false
    if (country && r.country !== country) return false
    switch (want) {
      case 'residential':
        return !r.isDatacenter && !r.isVpn && !r.isProxy
      case 'hosting':
        return r.isDatacenter
      case 'vpn':
        return r.isVpn || r.isDatacenter
      default:
        return true
    }
  }

  /** A random IPv4 address of one of `asns`, classified as `want` (and in `country` when given). */
  v4Addr(rng: Rng, asns: readonly number[], want: Want, country?: string): string {
    for (let attempt = 0; attempt < 400; attempt++) {
      const asn = rng.pick(asns)
      const ranges = this.v4.get(asn)
      if (!ranges?.length) continue
      const r = rng.pick(ranges)
      const ip = numToIp4(r.start + 1 + rng.int(r.size - 2))
      if (ip.endsWith('.0') || ip.endsWith('.255')) continue
      if (this.ok(this.intel.lookup(ip), want, country)) return ip
    }
    throw new Error(`no ${want} IPv4 address in AS${asns.join('/')}${country ? ` in ${country}` : ''}`)
  }

  /**
   * A random IPv4 address inside `ranges` (given blocks rather than an AS), classified as `want` (and in
   * `country` when given). Blocks are weighted by size.
   */
  v4InRanges(rng: Rng, ranges: readonly Range4[], want: Want, country?: string): string {
    const total = ranges.reduce((n, r) => n + r.size, 0)
    for (let attempt = 0; attempt < 2000; attempt++) {
      let at = rng.int(total)
      let r = ranges[0]!
      for (const x of ranges) {
        if (at < x.size) {
          r = x
          break
        }
        at -= x.size
      }
      const ip = numToIp4(r.start + 1 + rng.int(r.size - 2))
      if (ip.endsWith('.0') || ip.endsWith('.255')) continue
      if (this.ok(this.intel.lookup(ip), want, country)) return ip
    }
    throw new Error(`no ${want} IPv4 address in the given blocks${country ? ` in ${country}` : ''}`)
  }

  /** A /64 of one of `asns` (as its first four groups), classified as `want`; null when none exists. */
  v6Prefix(rng: Rng, asns: readonly number[], want: Want, country?: string): bigint | null {
    for (let attempt = 0; attempt < 200; attempt++) {
      const asn = rng.pick(asns)
      const ranges = this.v6.get(asn)
      if (!ranges?.length) continue
      const r = rng.pick(ranges)
      const head = r.head + BigInt(rng.int(Number(r.span > 1_000_000n ? 1_000_000n : r.span)))
      if (this.ok(this.intel.lookup(v6InPrefix(head, 1n)), want, country)) return head
    }
    return null
  }

  lookup(ip: string): IpIntelResult | null {
    return this.intel.lookup(ip)
  }
}

/** An address inside the /64 `head` with interface id `iid`. */
export function v6InPrefix(head: bigint, iid: bigint): string {
  return bigToIp6((head << 64n) | (iid & 0xffff_ffff_ffff_ffffn))
}

/** A random privacy-extension interface id. */
export function randomIid(rng: Rng): bigint {
  return (BigInt(rng.int(0x7fffffff)) << 32n) | BigInt(rng.int(0x7fffffff))
}

/** Neighbouring address in the same /24 (a NAT pool, a CGNAT gateway). */
export function sameSlash24(rng: Rng, ip: string): string {
  return ip.replace(/\.\d+$/, `.${1 + rng.int(254)}`)
}
