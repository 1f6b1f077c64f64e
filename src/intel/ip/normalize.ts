import { isIP } from 'node:net'

export type IpVersion = 4 | 6

export interface ParsedIp {
  /** Canonical text: dotted quad for IPv4 (also for IPv4-mapped IPv6), compressed lower-case IPv6. */
  ip: string
  version: IpVersion
  /** Network prefix stored instead of the address: /24 for IPv4, /48 for IPv6. */
  prefix: string
  /** Display hint safe to show in listings: `203.0.113.x`, `2001:db8:1::x`. */
  hint: string
  /** 32-bit value for IPv4, 128-bit bigint for IPv6, for range lookups. */
  value: bigint
}

function v6Groups(text: string): number[] | null {
  let s = text
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  // An embedded dotted quad (::ffff:1.2.3.4) becomes two groups.
  const lastColon = s.lastIndexOf(':')
  const tail = s.slice(lastColon + 1)
  if (tail.includes('.')) {
    if (isIP(tail) !== 4) return null
    const o = tail.split('.').map(Number)
    s = `${s.slice(0, lastColon + 1)}${(((o[0]! << 8) | o[1]!) >>> 0).toString(16)}:${(((o[2]! << 8) | o[3]!) >>> 0).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return null
  const head = halves[0] ? halves[0].split(':') : []
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 && missing !== 0) return null
  if (halves.length === 2 && missing < 1) return null
  const groups = [...head, ...Array<string>(Math.max(0, missing)).fill('0'), ...rest].map((g) =>
    Number.parseInt(g, 16),
  )
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null
}

function compressV6(groups: number[]): string {
  // RFC 5952: compress the longest run (length >= 2) of zero groups, leftmost on ties.
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestLen < 2) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

function fromV4(text: string): ParsedIp {
  const o = text.split('.').map(Number)
  const value = BigInt(((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0)
  const net = `${o[0]}.${o[1]}.${o[2]}`
  return { ip: o.join('.'), version: 4, prefix: `${net}.0/24`, hint: `${net}.x`, value }
}

/** Parses and canonicalises an IP address; returns null for anything that is not one. */
export function parseIp(input: string): ParsedIp | null {
  const text = input.trim()
  const kind = isIP(text)
  if (kind === 4) return fromV4(text)
  if (kind !== 6) return null
  const groups = v6Groups(text.toLowerCase())
  if (!groups) return null
  // IPv4-mapped (::ffff:a.b.c.d) is the IPv4 address itself.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return fromV4(`${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`)
  }
  let value = 0n
  for (const g of groups) value = (value << 16n) | BigInt(g)
  const net = compressV6([...groups.slice(0, 3), 0, 0, 0, 0, 0])
  const netHint = compressV6([...groups.slice(0, 3), 0, 0, 0, 0, 0]).replace(/::$/, '')
  return { ip: compressV6(groups), version: 6, prefix: `${net}/48`, hint: `${netHint}::x`, value }
}

/**
 * An IPv6 address's /64 (`2001:db8:1:2::/64`): one subscriber's allocation, inside which privacy
 * extensions pick a new address every day. Null for IPv4, whose address is already the subscriber's.
 */
export function block64(ip: ParsedIp): string | null {
  return ip.version === 6 ? `${formatIp((ip.value >> 64n) << 64n, 6)}/64` : null
}

/** Canonical text of a numeric address (the inverse of `parseIp(...).value`). */
export function formatIp(value: bigint, version: IpVersion): string {
  if (version === 4) {
    const n = Number(value & 0xffffffffn)
    return `${n >>> 24}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`
  }
  const groups: number[] = []
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn))
  return compressV6(groups)
}
