import { formatIp, type IpVersion, parseIp } from './normalize.js'

/** A CIDR range in canonical form: `network` has no host bits set. */
export interface Cidr {
  version: IpVersion
  len: number
  network: bigint
  /** `203.0.113.0/24`, `2001:db8::/32`. */
  text: string
}

const BITS = { 4: 32, 6: 128 } as const
/** The widest range a list entry may name: a /0 would list every address there is. */
export const MIN_PREFIX = { 4: 8, 6: 16 } as const

/** The address `value` keeps only its first `len` bits of. */
export function networkOf(value: bigint, version: IpVersion, len: number): bigint {
  const host = BigInt(BITS[version] - len)
  return (value >> host) << host
}

export const cidrText = (network: bigint, version: IpVersion, len: number) =>
  `${formatIp(network, version)}/${len}`

/**
 * Parses `a.b.c.d/n` or `x:y::/n`. Returns a message for anything else: host bits set (the message
 * names the network meant), a length outside MIN_PREFIX..32 (128), an IPv4-mapped IPv6 range.
 */
export function parseCidr(input: string): Cidr | string {
  const text = input.trim()
  const slash = text.indexOf('/')
  if (slash < 0) return 'value is not a CIDR range'
  const addr = parseIp(text.slice(0, slash))
  const lenText = text.slice(slash + 1)
  if (!addr || !/^\d{1,3}$/.test(lenText)) return 'value is not a valid CIDR range'
  if (addr.version === 4 && text.slice(0, slash).includes(':'))
    return 'value is an IPv4-mapped IPv6 range; write it as an IPv4 range'
  const len = Number(lenText)
  const v = addr.version
  if (len < MIN_PREFIX[v] || len > BITS[v])
    return `value's prefix length must be ${MIN_PREFIX[v]}-${BITS[v]} for IPv${v}`
  const network = networkOf(addr.value, v, len)
  if (network !== addr.value) return `value has host bits set; the range is ${cidrText(network, v, len)}`
  return { version: v, len, network, text: cidrText(network, v, len) }
}
