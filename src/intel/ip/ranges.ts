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

const DIGITS = /^\d{1,3}$/

/** Parses `a.b.c.d`, `a.b.c.d/len`, `v6` or `v6/len`. Host bits below the prefix are cleared. */
export function parseCidr(text: string): IpRange | null {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const addr = slash < 0 ? trimmed : trimmed.slice(0, slash)
  const ip = parseIp(addr)
  if (!ip) return null
  const bits = ip.version === 4 ? 32 : 128
  let len = bits
  if (slash >= 0) {
    const lenText = trimmed.slice(slash + 1)
    if (!DIGITS.test(lenText)) return null
    len = Number(lenText)
    // parseIp folds ::ffff:a.b.c.d into IPv4, so a mapped prefix loses its 96 leading bits.
    if (ip.version === 4 && addr.includes(':')) len -= 96
    if (len < 0 || len > bits) return null
  }
  const mask = (1n << BigInt(bits - len)) - 1n
  const start = ip.value & ~mask
  return { version: ip.version, start, end: start | mask }
}

/** Canonical `network/len` text for a CIDR-aligned range (as produced by parseCidr). */
export function formatCidr(range: IpRange): string {
  const size = range.end - range.start + 1n
  let hostBits = 0
  while (1n << BigInt(hostBits) < size) hostBits++
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

interface Segment {
  start: bigint
  end: bigint
  label: number
}

/**
 * Turns possibly overlapping ranges into sorted, disjoint, merged segments. Where ranges overlap the
 * one starting later wins (for CIDR blocks: the more specific block); on identical ranges a named
 * entry wins over an unnamed one, and otherwise the later input wins.
 */
function disjoint(ranges: { start: bigint; end: bigint; label: number; order: number }[]): Segment[] {
  ranges.sort((a, b) => {
    if (a.start !== b.start) return a.start < b.start ? -1 : 1
    if (a.end !== b.end) return a.end > b.end ? -1 : 1
    // Identical ranges: a named entry beats an unnamed one, then the later entry wins.
    if ((a.label === 0) !== (b.label === 0)) return a.label === 0 ? -1 : 1
    return a.order - b.order
  })
  const out: Segment[] = []
  const emit = (start: bigint, end: bigint, label: number) => {
    if (start > end) return
    const last = out[out.length - 1]
    if (last && last.label === label && last.end + 1n === start) last.end = end
    else out.push({ start, end, label })
  }
  const stack: { end: bigint; label: number }[] = []
  let pos = 0n
  for (const r of ranges) {
    let top = stack[stack.length - 1]
    while (top && top.end < r.start) {
      emit(pos, top.end, top.label)
      pos = top.end + 1n
      stack.pop()
      top = stack[stack.length - 1]
    }
    if (top) emit(pos, r.start - 1n, top.label)
    pos = r.start
    while (top && top.end <= r.end) {
      stack.pop()
      top = stack[stack.length - 1]
    }
    stack.push({ end: r.end, label: r.label })
  }
  while (stack.length > 0) {
    const top = stack.pop()!
    emit(pos, top.end, top.label)
    pos = top.end + 1n
  }
  return out
}

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
    const v4: { start: bigint; end: bigint; label: number; order: number }[] = []
    const v6: { start: bigint; end: bigint; label: number; order: number }[] = []
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
      const item = { start: r.start, end: r.end, label, order: order++ }
      if (r.version === 4) v4.push(item)
      else v6.push(item)
    }
    this.entries = order
    const s4 = disjoint(v4)
    this.v4Start = new Uint32Array(s4.length)
    this.v4End = new Uint32Array(s4.length)
    this.v4Label = new Uint32Array(s4.length)
    s4.forEach((s, i) => {
      this.v4Start[i] = Number(s.start)
      this.v4End[i] = Number(s.end)
      this.v4Label[i] = s.label
    })
    const s6 = disjoint(v6)
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
