import { isIP } from 'node:net'
import { parseIp } from './normalize.js'
import { parseCidr } from './ranges.js'

/**
 * Address blocks that are not ordinary public unicast hosts: the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (every entry, including the few marked globally reachable: none of them is a
 * mail server), multicast, and for IPv6 everything outside the global unicast space 2000::/3.
 * Names are the registry's own.
 */
const V4: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', '"This network" (RFC 791)'],
  ['10.0.0.0/8', 'Private-Use (RFC 1918)'],
  ['100.64.0.0/10', 'Shared Address Space (RFC 6598)'],
  ['127.0.0.0/8', 'Loopback (RFC 1122)'],
  ['169.254.0.0/16', 'Link Local (RFC 3927)'],
  ['172.16.0.0/12', 'Private-Use (RFC 1918)'],
  // Covers 192.0.0.0/29 DS-Lite, 192.0.0.8 IPv4 dummy, .9 PCP anycast, .10 TURN anycast,
  // .170/.171 NAT64/DNS64 discovery.
  ['192.0.0.0/24', 'IETF Protocol Assignments (RFC 6890)'],
  ['192.0.2.0/24', 'Documentation TEST-NET-1 (RFC 5737)'],
  ['192.31.196.0/24', 'AS112-v4 (RFC 7535)'],
  ['192.52.193.0/24', 'AMT (RFC 7450)'],
  ['192.88.99.0/24', 'Deprecated 6to4 Relay Anycast (RFC 7526)'],
  ['192.168.0.0/16', 'Private-Use (RFC 1918)'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service (RFC 7534)'],
  ['198.18.0.0/15', 'Benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'Documentation TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'Documentation TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0/4', 'Multicast (RFC 5771)'],
  // Includes 255.255.255.255/32 Limited Broadcast (RFC 919).
  ['240.0.0.0/4', 'Reserved (RFC 1112)'],
]

const V6: readonly (readonly [string, string])[] = [
  // IPv4-compatible (deprecated, RFC 4291), which also holds ::/128 Unspecified and ::1/128 Loopback.
  ['::/96', 'IPv4-compatible, Unspecified and Loopback (RFC 4291)'],
  ['::ffff:0:0/96', 'IPv4-mapped Address (RFC 4291)'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translation (RFC 6052)'],
  ['64:ff9b:1::/48', 'Local-use IPv4/IPv6 Translation (RFC 8215)'],
  ['100::/64', 'Discard-Only Address Block (RFC 6666)'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix (RFC 9780)'],
  // Covers 2001::/32 TEREDO, 2001:1::1-3 PCP/TURN/DNS-SD anycast, 2001:2::/48 Benchmarking,
  // 2001:3::/32 AMT, 2001:4:112::/48 AS112-v6, 2001:10::/28 ORCHID, 2001:20::/28 ORCHIDv2,
  // 2001:30::/28 Drone Remote ID.
  ['2001::/23', 'IETF Protocol Assignments (RFC 2928)'],
  ['2001:db8::/32', 'Documentation (RFC 3849)'],
  ['2002::/16', '6to4 (RFC 3056)'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service (RFC 7534)'],
  ['3fff::/20', 'Documentation (RFC 9637)'],
  ['5f00::/16', 'Segment Routing SIDs (RFC 9602)'],
  ['fc00::/7', 'Unique-Local (RFC 4193)'],
  ['fe80::/10', 'Link-Local Unicast (RFC 4291)'],
  ['ff00::/8', 'Multicast (RFC 4291)'],
]

interface Block {
  start: bigint
  end: bigint
  name: string
}

const compile = (rows: readonly (readonly [string, string])[]): Block[] =>
  rows.map(([cidr, name]) => {
    const r = parseCidr(cidr)
    if (!r) throw new Error(`bad special-purpose block ${cidr}`)
    return { start: r.start, end: r.end, name: `${name} ${cidr}` }
  })

const V4_BLOCKS = compile(V4)
const V6_BLOCKS = compile(V6)
const GLOBAL_UNICAST = parseCidr('2000::/3')!

const find = (blocks: Block[], v: bigint): string | null =>
  blocks.find((b) => v >= b.start && v <= b.end)?.name ?? null

const v4Text = (v: bigint): string => [24n, 16n, 8n, 0n].map((s) => ((v >> s) & 0xffn).toString()).join('.')

/** IPv4 addresses carried inside an IPv6 address by the transition mechanisms that embed one. */
function embeddedV4(v: bigint): { how: string; v4: bigint }[] {
  const low32 = v & 0xffffffffn
  const out: { how: string; v4: bigint }[] = []
  if (v >> 32n === 0n && v > 1n) out.push({ how: 'IPv4-compatible', v4: low32 })
  if (v >> 32n === 0xffffn) out.push({ how: 'IPv4-mapped', v4: low32 })
  if (v >> 32n === 0x64ff9b0000000000000000n) out.push({ how: 'NAT64', v4: low32 })
  // 6to4: 2002:AABB:CCDD::/48 routes to the IPv4 address AABBCCDD.
  if (v >> 112n === 0x2002n) out.push({ how: '6to4', v4: (v >> 80n) & 0xffffffffn })
  // Teredo: 2001:0:SERVER:SERVER:flags:port:~CLIENT:~CLIENT.
  if (v >> 96n === 0x20010000n) {
    out.push({ how: 'Teredo server', v4: (v >> 64n) & 0xffffffffn })
    out.push({ how: 'Teredo client', v4: low32 ^ 0xffffffffn })
  }
  return out
}

/**
 * Why an address must not be contacted: the special-purpose block it is in (or that an IPv4 address
 * embedded in it is in), or null for an ordinary public unicast address. Unparseable text is refused.
 */
export function specialPurpose(address: string): string | null {
  const text = address.trim()
  const parsed = parseIp(text)
  if (!parsed) return 'not an IP address'
  if (parsed.version === 4) {
    // parseIp reads ::ffff:a.b.c.d as the IPv4 address; the mapped form itself is refused.
    const v4 = find(V4_BLOCKS, parsed.value)
    if (isIP(text) === 6) return `IPv4-mapped Address (RFC 4291) ::ffff:0:0/96${v4 ? ` embedding ${v4}` : ''}`
    return v4
  }
  const v = parsed.value
  for (const e of embeddedV4(v)) {
    const hit = find(V4_BLOCKS, e.v4)
    if (hit) return `${e.how} address embedding ${v4Text(e.v4)}: ${hit}`
  }
  const block = find(V6_BLOCKS, v)
  if (block) return block
  if (v < GLOBAL_UNICAST.start || v > GLOBAL_UNICAST.end) return 'outside global unicast 2000::/3 (RFC 4291)'
  return null
}
