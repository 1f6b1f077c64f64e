import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { ParsedIp } from './normalize.js'
import { cmpWords, lastStartAtOrBefore, parseV6Words, v6Words } from './ranges.js'

export interface AsnInfo {
  asn: number
  /** Organisation holding the AS, as registered; null when the source has none. */
  org: string | null
}

/** Directory of the installed `@ip-location-db/asn` package. */
export function asnPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json'))
}

/** Package versions end in YYYYMMDDHH; that is the build date of the data. */
export function dateFromPackageVersion(version: string): string | null {
  const m = /(\d{4})(\d{2})(\d{2})\d{2}$/.exec(version)
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null
}

function countLines(text: string): number {
  let n = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++
  return text.length > 0 && !text.endsWith('\n') ? n + 1 : n
}

/** Minimal CSV cursor for `a,b,c,org` rows: numbers unquoted, the org possibly quoted with "" escapes. */
class Cursor {
  pos = 0
  constructor(readonly text: string) {}

  /** True at the end of the text; skips blank lines first. */
  get done(): boolean {
    const t = this.text
    let c = t.charCodeAt(this.pos)
    while (c === 10 || c === 13) c = t.charCodeAt(++this.pos)
    return this.pos >= t.length
  }

  /** Returns the raw field up to the next comma (not quoted). */
  field(): string {
    const comma = this.text.indexOf(',', this.pos)
    const end = comma < 0 ? this.text.length : comma
    const value = this.text.slice(this.pos, end)
    this.pos = end + 1
    return value
  }

  int(): number {
    const t = this.text
    let n = 0
    let c = t.charCodeAt(this.pos)
    while (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48)
      c = t.charCodeAt(++this.pos)
    }
    this.pos++ // the comma
    return n
  }

  /** If the rest of the line is exactly `value` (unquoted), consumes the line and returns true. */
  skipIfRest(value: string): boolean {
    const t = this.text
    const p = this.pos
    const n = value.length
    for (let k = 0; k < n; k++) if (t.charCodeAt(p + k) !== value.charCodeAt(k)) return false
    const after = p + n
    const c = t.charCodeAt(after)
    if (after < t.length && c !== 10 && c !== 13) return false
    const nl = t.indexOf('\n', after)
    this.pos = nl < 0 ? t.length : nl + 1
    return true
  }

  /** Last field of the line; consumes the line break. */
  last(): string {
    const t = this.text
    if (t.charCodeAt(this.pos) === 34) {
      let value = ''
      let i = this.pos + 1
      for (;;) {
        const q = t.indexOf('"', i)
        if (q < 0) {
          value += t.slice(i)
          i = t.length
          break
        }
        value += t.slice(i, q)
        i = q + 1
        if (t.charCodeAt(i) !== 34) break
        value += '"'
        i++
      }
      const nl = t.indexOf('\n', i)
      this.pos = nl < 0 ? t.length : nl + 1
      return value
    }
    const nl = t.indexOf('\n', this.pos)
    const end = nl < 0 ? t.length : nl
    const value = t.slice(this.pos, end)
    this.pos = end + 1
    return value.endsWith('\r') ? value.slice(0, -1) : value
  }
}

/**
 * IP → AS number and organisation, from the ip-location-db ASN CSVs, held in typed arrays:
 * IPv4 as 32-bit starts/ends, IPv6 as four 32-bit words per bound, plus a deduplicated org table.
 */
export class AsnTable {
  private readonly orgs: string[] = []
  private v4Start!: Uint32Array
  private v4End!: Uint32Array
  private v4Asn!: Uint32Array
  private v4Org!: Uint32Array
  private v6Start!: Uint32Array
  private v6End!: Uint32Array
  private v6Asn!: Uint32Array
  private v6Org!: Uint32Array
  private v6Count = 0
  /** Data date taken from the package version (YYYY-MM-DD), when it can be read. */
  readonly dataDate: string | null

  constructor(dir: string = asnPackageDir()) {
    const orgIds = new Map<string, number>()
    const byAsn = new Map<number, number>()
    // An AS almost always keeps one organisation name, so most rows are resolved by number without
    // cutting a string out of the file (hashing 500k fresh strings dominated the load time).
    const orgId = (asn: number, cur: Cursor): number => {
      const cached = byAsn.get(asn)
      if (cached !== undefined && cur.skipIfRest(this.orgs[cached]!)) return cached
      const name = cur.last()
      let id = orgIds.get(name)
      if (id === undefined) {
        id = this.orgs.length
        this.orgs.push(name)
        orgIds.set(name, id)
      }
      byAsn.set(asn, id)
      return id
    }
    this.loadV4(readFileSync(join(dir, 'asn-ipv4-num.csv'), 'utf8'), orgId)
    this.loadV6(readFileSync(join(dir, 'asn-ipv6.csv'), 'utf8'), orgId)
    let version = ''
    try {
      version =
        (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? ''
    } catch {
      // A copy of the CSVs without package.json simply has no known date.
    }
    this.dataDate = dateFromPackageVersion(version)
  }

  private loadV4(text: string, orgId: (asn: number, cur: Cursor) => number): void {
    const max = countLines(text)
    const start = new Uint32Array(max)
    const end = new Uint32Array(max)
    const asn = new Uint32Array(max)
    const org = new Uint32Array(max)
    const cur = new Cursor(text)
    let n = 0
    while (!cur.done) {
      const s = cur.int()
      const e = cur.int()
      const a = cur.int()
      const o = orgId(a, cur)
      if (e < s) continue
      start[n] = s
      end[n] = e
      asn[n] = a
      org[n] = o
      n++
    }
    this.v4Start = start.subarray(0, n)
    this.v4End = end.subarray(0, n)
    this.v4Asn = asn.subarray(0, n)
    this.v4Org = org.subarray(0, n)
  }

  private loadV6(text: string, orgId: (asn: number, cur: Cursor) => number): void {
    const max = countLines(text)
    const start = new Uint32Array(max * 4)
    const end = new Uint32Array(max * 4)
    const asn = new Uint32Array(max)
    const org = new Uint32Array(max)
    const cur = new Cursor(text)
    let n = 0
    while (!cur.done) {
      const s = cur.field()
      const e = cur.field()
      const a = cur.int()
      const o = orgId(a, cur)
      if (!parseV6Words(s, start, n) || !parseV6Words(e, end, n)) continue
      asn[n] = a
      org[n] = o
      n++
    }
    this.v6Start = start.subarray(0, n * 4)
    this.v6End = end.subarray(0, n * 4)
    this.v6Asn = asn.subarray(0, n)
    this.v6Org = org.subarray(0, n)
    this.v6Count = n
  }

  get v4Rows(): number {
    return this.v4Asn.length
  }

  get v6Rows(): number {
    return this.v6Count
  }

  get orgCount(): number {
    return this.orgs.length
  }

  lookup(ip: ParsedIp): AsnInfo | null {
    let i: number
    if (ip.version === 4) {
      const x = Number(ip.value)
      const starts = this.v4Start
      let lo = 0
      let hi = starts.length - 1
      i = -1
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1
        if (starts[mid]! <= x) {
          i = mid
          lo = mid + 1
        } else hi = mid - 1
      }
      if (i < 0 || x > this.v4End[i]!) return null
      return this.row(this.v4Asn[i]!, this.v4Org[i]!)
    }
    const [a, b, c, d] = v6Words(ip.value)
    i = lastStartAtOrBefore(this.v6Start, this.v6Count, a, b, c, d)
    if (i < 0 || cmpWords(this.v6End, i, a, b, c, d) < 0) return null
    return this.row(this.v6Asn[i]!, this.v6Org[i]!)
  }

  /** Organisation recorded for an AS anywhere in the table (a linear scan, for checks, not lookups). */
  orgForAsn(asn: number): string | null {
    let i = this.v4Asn.indexOf(asn)
    if (i >= 0) return this.orgs[this.v4Org[i]!] ?? null
    i = this.v6Asn.indexOf(asn)
    return i >= 0 ? (this.orgs[this.v6Org[i]!] ?? null) : null
  }

  private row(asn: number, org: number): AsnInfo | null {
    if (asn === 0) return null
    const name = this.orgs[org]
    return { asn, org: name ? name : null }
  }
}
