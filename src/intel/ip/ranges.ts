import { formatIp, type IpVersion, type ParsedIp, parseIp } from './normalize.js'

/** An inclusive address range, as numbers of the given family. */
export interface IpRange {
  version: IpVersion
  start: bigint
  end: bigint
}

export interface LabelledRange extends IpRange {
  /** Optional name carried by the range (e.g. a VPN operator); null when the source names none. */
  label: string | null
}

/** Parses a strict dotted quad (no leading zeros, like node:net) to a 32-bit number, or -1. */
function parseV4Number(text: string, from: number, to: number): number {
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k)
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1
      value = value * 256 + octet
      octet = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) return -1
      octet = octet * 10 + (c - 48)
      if (++digits > 3 || octet > 255) return -1
    } else return -1
  }
  if (dots !== 3 || digits === 0) return -1
  return value * 256 + octet
}

const wordsScratch = new Uint32Array(4)

function wordsToBigint(w: Uint32Array): bigint {
  return (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!)
}

/**
 * Parses `a.b.c.d`, `a.b.c.d/len`, `v6` or `v6/len`. Host bits below the prefix are cleared;
 * IPv4-mapped IPv6 becomes IPv4. Hand-written rather than built on parseIp because feeds hold
 * hundreds of thousands of lines and only the numbers are needed here.
 */
export function parseCidr(text: string): IpRange | null {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const addrEnd = slash < 0 ? trimmed.length : slash
  let len = -1
  if (slash >= 0) {
    const digits = trimmed.length - slash - 1
    if (digits < 1 || digits > 3) return null
    len = 0
    for (let k = slash + 1; k < trimmed.length; k++) {
      const c = trimmed.charCodeAt(k)
      if (c < 48 || c > 57) return null
      len = len * 10 + (c - 48)
    }
  }
  if (!trimmed.includes(':')) {
    const v = parseV4Number(trimmed, 0, addrEnd)
    if (v < 0) return null
    if (len < 0) len = 32
    if (len > 32) return null
    const size = 2 ** (32 - len)
    const start = v - (v % size)
    return { version: 4, start: BigInt(start), end: BigInt(start + size - 1) }
  }
  if (len > 128) return null
  const addr = trimmed.slice(0, addrEnd)
  const w = wordsScratch
  if (!parseV6Words(addr, w, 0)) {
    // Rare notations (embedded dotted quad, zone index) take the general parser.
    const ip = parseIp(addr)
    if (!ip) return null
    if (ip.version === 4) {
      if (len >= 0 && len < 96) return null
      return parseCidr(len < 0 ? ip.ip : `${ip.ip}/${len - 96}`)
    }
    w.set(v6Words(ip.value))
  } else if (w[0] === 0 && w[1] === 0 && w[2] === 0xffff) {
    // IPv4-mapped: the last word is the IPv4 address and the prefix loses its 96 leading bits.
    if (len >= 0 && len < 96) return null
    const size = 2 ** (128 - (len < 0 ? 128 : len))
    const v = w[3]!
    const start = v - (v % size)
    return { version: 4, start: BigInt(start), end: BigInt(start + size - 1) }
  }
  if (len < 0) len = 128
  if (len > 128) return null
  const value = wordsToBigint(w)
  const mask = (1n << BigInt(128 - len)) - 1n
  const start = value & ~mask
  return { version: 6, start, end: start | mask }
}

const groupsScratch = new Array<number>(8).fill(0)

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 97 && c <= 102) return c - 87
  if (c >= 65 && c <= 70) return c - 55
  return -1
}

/**
 * Parses a plain IPv6 text address (no embedded dotted quad, no zone) into 4 words at `out[i*4..]`,
 * scanning characters rather than splitting strings: it runs for every row of the ASN data and of
 * every feed at start.
 */
export function parseV6Words(text: string, out: Uint32Array, i: number): boolean {
  const g = groupsScratch
  let n = 0
  let gap = -1
  let value = 0
  let digits = 0
  const len = text.length
  for (let k = 0; k < len; k++) {
    const c = text.charCodeAt(k)
    if (c === 58) {
      if (digits > 0) {
        if (n === 8) return false
        g[n++] = value
        value = 0
        digits = 0
      } else if (k !== 0) return false
      if (k + 1 < len && text.charCodeAt(k + 1) === 58) {
        if (gap >= 0) return false
        gap = n
        k++
      } else if (k === 0 || k + 1 === len) return false
      continue
    }
    const h = hexDigit(c)
    if (h < 0 || ++digits > 4) return false
    value = value * 16 + h
  }
  if (digits > 0) {
    if (n === 8) return false
    g[n++] = value
  }
  if (gap < 0 ? n !== 8 : n > 7) return false
  const o = i * 4
  const shift = 8 - n
  for (let w = 0; w < 4; w++) {
    const hiIdx = w * 2
    const loIdx = hiIdx + 1
    const hi = gap < 0 || hiIdx < gap ? g[hiIdx]! : hiIdx < gap + shift ? 0 : g[hiIdx - shift]!
    const lo = gap < 0 || loIdx < gap ? g[loIdx]! : loIdx < gap + shift ? 0 : g[loIdx - shift]!
    out[o + w] = hi * 0x10000 + lo
  }
  return true
}

/** Canonical `network/len` text for a CIDR-aligned range (as produced by parseCidr). */
export function formatCidr(range: IpRange): string {
  // The range is CIDR-aligned, so its size is a power of two: count its binary digits.
  const hostBits = (range.end - range.start + 1n).toString(2).length - 1
  const bits = range.version === 4 ? 32 : 128
  return `${formatIp(range.start, range.version)}/${bits - hostBits}`
}

/** The four 32-bit words of a 128-bit value, most significant first. */
export function v6Words(value: bigint): [number, number, number, number] {
  return [
    Number((value >> 96n) & 0xffffffffn),
    Number((value >> 64n) & 0xffffffffn),
    Number((value >> 32n) & 0xffffffffn),
    Number(value & 0xffffffffn),
  ]
}

/** Compares the 4-word value at `arr[i*4..]` with (a,b,c,d). */
export function cmpWords(arr: Uint32Array, i: number, a: number, b: number, c: number, d: number): number {
  const o = i * 4
  const x0 = arr[o]!
  if (x0 !== a) return x0 < a ? -1 : 1
  const x1 = arr[o + 1]!
  if (x1 !== b) return x1 < b ? -1 : 1
  const x2 = arr[o + 2]!
  if (x2 !== c) return x2 < c ? -1 : 1
  const x3 = arr[o + 3]!
  if (x3 !== d) return x3 < d ? -1 : 1
  return 0
}

function writeWords(arr: Uint32Array, i: number, value: bigint): void {
  const w = v6Words(value)
  arr.set(w, i * 4)
}

interface Item<T> {
  start: T
  end: T
  /** Leading bits of `start` as a plain number, so most sort comparisons avoid BigInt. */
  key: number
  label: number
  order: number
}

interface Segment<T> {
  start: T
  end: T
  label: number
}

/**
 * Turns possibly overlapping ranges into sorted, disjoint, merged segments. Where ranges overlap the
 * one starting later wins (for CIDR blocks: the more specific block); on identical ranges a named
 * entry wins over an unnamed one, and otherwise the later input wins. Generic so IPv4 runs on plain
 * numbers and only IPv6 pays for BigInt.
 */
function disjoint<T extends number | bigint>(
  ranges: Item<T>[],
  succ: (x: T) => T,
  pred: (x: T) => T,
): Segment<T>[] {
  ranges.sort((a, b) => {
    if (a.key !== b.key) return a.key - b.key
    if (a.start !== b.start) return a.start < b.start ? -1 : 1
    if (a.end !== b.end) return a.end > b.end ? -1 : 1
    // Identical ranges: a named entry beats an unnamed one, then the later entry wins.
    if ((a.label === 0) !== (b.label === 0)) return a.label === 0 ? -1 : 1
    return a.order - b.order
  })
  const out: Segment<T>[] = []
  const emit = (start: T, end: T, label: number) => {
    if (start > end) return
    const last = out[out.length - 1]
    if (last && last.label === label && succ(last.end) === start) last.end = end
    else out.push({ start, end, label })
  }
  const stack: { end: T; label: number }[] = []
  let pos: T | undefined
  for (const r of ranges) {
    let top = stack[stack.length - 1]
    while (top && top.end < r.start) {
      emit(pos!, top.end, top.label)
      pos = succ(top.end)
      stack.pop()
      top = stack[stack.length - 1]
    }
    if (top && r.start > pos!) emit(pos!, pred(r.start), top.label)
    pos = r.start
    while (top && top.end <= r.end) {
      stack.pop()
      top = stack[stack.length - 1]
    }
    stack.push({ end: r.end, label: r.label })
  }
  while (stack.length > 0) {
    const top = stack.pop()!
    emit(pos!, top.end, top.label)
    pos = succ(top.end)
  }
  return out
}

const succ4 = (x: number) => x + 1
const pred4 = (x: number) => x - 1
const succ6 = (x: bigint) => x + 1n
const pred6 = (x: bigint) => x - 1n

/**
 * Immutable set of IPv4 and IPv6 ranges with optional labels, searched by binary search over
 * sorted disjoint segments held in typed arrays (no per-entry objects after build).
 */
export class RangeSet {
  private readonly labels: string[]
  private readonly v4Start: Uint32Array
  private readonly v4End: Uint32Array
  private readonly v4Label: Uint32Array
  private readonly v6Start: Uint32Array
  private readonly v6End: Uint32Array
  private readonly v6Label: Uint32Array
  /** Number of input entries the set was built from (before merging). */
  readonly entries: number

  constructor(input: Iterable<IpRange & { label?: string | null }>) {
    // Label 0 means "present, unnamed".
    this.labels = ['']
    const labelIds = new Map<string, number>()
    const v4: Item<number>[] = []
    const v6: Item<bigint>[] = []
    let order = 0
    for (const r of input) {
      let label = 0
      if (r.label) {
        label = labelIds.get(r.label) ?? 0
        if (label === 0) {
          label = this.labels.length
          this.labels.push(r.label)
          labelIds.set(r.label, label)
        }
      }
      if (r.version === 4) {
        const start = Number(r.start)
        v4.push({ start, end: Number(r.end), key: start, label, order: order++ })
      } else v6.push({ start: r.start, end: r.end, key: Number(r.start >> 76n), label, order: order++ })
    }
    this.entries = order
    const s4 = disjoint(v4, succ4, pred4)
    this.v4Start = new Uint32Array(s4.length)
    this.v4End = new Uint32Array(s4.length)
    this.v4Label = new Uint32Array(s4.length)
    s4.forEach((s, i) => {
      this.v4Start[i] = s.start
      this.v4End[i] = s.end
      this.v4Label[i] = s.label
    })
    const s6 = disjoint(v6, succ6, pred6)
    this.v6Start = new Uint32Array(s6.length * 4)
    this.v6End = new Uint32Array(s6.length * 4)
    this.v6Label = new Uint32Array(s6.length)
    s6.forEach((s, i) => {
      writeWords(this.v6Start, i, s.start)
      writeWords(this.v6End, i, s.end)
      this.v6Label[i] = s.label
    })
  }

  /** Number of disjoint segments held (after merging). */
  get segments(): number {
    return this.v4Label.length + this.v6Label.length
  }

  /** undefined when the address is not covered; otherwise the label, or null for an unnamed entry. */
  match(ip: ParsedIp): string | null | undefined {
    const idx = ip.version === 4 ? this.find4(Number(ip.value)) : this.find6(ip.value)
    if (idx < 0) return undefined
    const label = (ip.version === 4 ? this.v4Label : this.v6Label)[idx]!
    return label === 0 ? null : this.labels[label]!
  }

  has(ip: ParsedIp): boolean {
    return this.match(ip) !== undefined
  }

  private find4(x: number): number {
    const starts = this.v4Start
    let lo = 0
    let hi = starts.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (starts[mid]! <= x) {
        found = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return found >= 0 && x <= this.v4End[found]! ? found : -1
  }

  private find6(value: bigint): number {
    const [a, b, c, d] = v6Words(value)
    const found = lastStartAtOrBefore(this.v6Start, this.v6Label.length, a, b, c, d)
    return found >= 0 && cmpWords(this.v6End, found, a, b, c, d) >= 0 ? found : -1
  }
}

/** Index of the last 4-word start <= (a,b,c,d), or -1. */
export function lastStartAtOrBefore(
  starts: Uint32Array,
  count: number,
  a: number,
  b: number,
  c: number,
  d: number,
): number {
  let lo = 0
  let hi = count - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (cmpWords(starts, mid, a, b, c, d) <= 0) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}
