import { parseIp } from '../ip/normalize.js'
import { formatCidr, type LabelledRange, parseCidr } from '../ip/ranges.js'
import type { FeedDef, FeedFormat } from './catalog.js'

export interface AsnEntry {
  asn: number
  /** Operator / provider name when the list gives one. */
  name: string | null
}

interface ParseStats {
  /** Lines (or JSON items) that were neither data, blank, comment nor header, and were skipped. */
  malformed: number
  /** A few of the skipped lines, for progress output. */
  samples: string[]
}

export type ParsedFeed =
  | ({ kind: 'ranges'; entries: LabelledRange[] } & ParseStats)
  | ({ kind: 'asns'; entries: AsnEntry[] } & ParseStats)

const MAX_SAMPLES = 3
const MAX_LABEL = 120
const HEADER_WORDS = new Set(['cidr', 'prefix', 'ip', 'ip_prefix', 'network', 'range', 'subnet', 'asn', 'as'])

/** Trims, unquotes a CSV-quoted value, drops control characters; empty becomes null. */
export function cleanLabel(raw: string | undefined): string | null {
  if (raw === undefined) return null
  let s = raw.trim()
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) s = s.slice(1, -1).replace(/""/g, '"')
  s = s
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return s ? s.slice(0, MAX_LABEL) : null
}

function stripComment(line: string): string {
  const hash = line.indexOf('#')
  return (hash < 0 ? line : line.slice(0, hash)).trim()
}

function isHeader(line: string): boolean {
  const first = line.split(/[,;\s]/, 1)[0]!.toLowerCase()
  return HEADER_WORDS.has(first)
}

/**
 * Shortest prefixes a feed entry may have. No Tor, VPN, proxy or hosting list has a reason to list a
 * whole /7 of IPv4 or a /15 of IPv6, and a default route (0.0.0.0/0, ::/0) would flag every address:
 * such lines are taken for mistakes (or poisoning) and skipped as malformed.
 */
export const MIN_PREFIX = { 4: 8, 6: 16 } as const

function tooBroad(range: { version: 4 | 6; start: bigint; end: bigint }): boolean {
  const bits = range.version === 4 ? 32 : 128
  const hostBits = (range.end - range.start + 1n).toString(2).length - 1
  return bits - hostBits < MIN_PREFIX[range.version]
}

class Collector<T> {
  readonly entries: T[] = []
  malformed = 0
  readonly samples: string[] = []

  bad(line: string): void {
    this.malformed++
    if (this.samples.length < MAX_SAMPLES)
      this.samples.push(line.length > 80 ? `${line.slice(0, 80)}…` : line)
  }
}

/** Tor bulk exit list: one address per line (`ExitAddress <ip> …` lines from exit-addresses also work). */
function parseIpList(text: string, out: Collector<LabelledRange>): void {
  for (const raw of text.split('\n')) {
    const line = stripComment(raw)
    if (!line) continue
    const token = line.startsWith('ExitAddress ') ? (line.split(/\s+/)[1] ?? '') : line
    const ip = parseIp(token)
    if (ip) out.entries.push({ version: ip.version, start: ip.value, end: ip.value, label: null })
    else out.bad(line)
  }
}

/** Apple egress-ip-ranges.csv: `prefix,country,region,city,`; only the prefix is kept. */
function parseRelayCsv(text: string, out: Collector<LabelledRange>): void {
  let first = true
  for (const raw of text.split('\n')) {
    const line = stripComment(raw)
    if (!line) continue
    const range = parseCidr(line.split(',', 1)[0]!)
    if (range && !tooBroad(range))
      out.entries.push({ version: range.version, start: range.start, end: range.end, label: null })
    else if (!(first && isHeader(line))) out.bad(line)
    first = false
  }
}

/** One CIDR or address per line, optionally followed by `,name` (the rest of the line). */
function parseCidrLines(text: string, named: boolean, out: Collector<LabelledRange>): void {
  let first = true
  for (const raw of text.split('\n')) {
    const line = stripComment(raw)
    if (!line) continue
    const comma = line.indexOf(',')
    const range = parseCidr(comma < 0 ? line : line.slice(0, comma))
    if (range && !tooBroad(range)) {
      const label = named && comma >= 0 ? cleanLabel(line.slice(comma + 1)) : null
      out.entries.push({ version: range.version, start: range.start, end: range.end, label })
    } else if (!(first && isHeader(line))) out.bad(line)
    first = false
  }
}

interface JsonPrefix {
  ip_prefix?: unknown
  ipv6_prefix?: unknown
  ipv4Prefix?: unknown
  ipv6Prefix?: unknown
  service?: unknown
}

/**
 * The providers' own published range files: AWS ip-ranges.json, Google cloud.json / goog.json and
 * Oracle public_ip_ranges.json. Returns false when the document is none of them.
 */
function parseProviderJson(text: string, named: boolean, out: Collector<LabelledRange>): boolean {
  let doc: { prefixes?: unknown; ipv6_prefixes?: unknown; regions?: unknown }
  try {
    doc = JSON.parse(text) as typeof doc
  } catch {
    return false
  }
  const add = (value: unknown, label: string) => {
    const range = typeof value === 'string' ? parseCidr(value) : null
    if (range && !tooBroad(range))
      out.entries.push({
        version: range.version,
        start: range.start,
        end: range.end,
        label: named ? label : null,
      })
    else out.bad(JSON.stringify(value) ?? String(value))
  }
  const items = (v: unknown): JsonPrefix[] => (Array.isArray(v) ? (v as JsonPrefix[]) : [])
  if (Array.isArray(doc.prefixes) && ('ipv6_prefixes' in doc || items(doc.prefixes)[0]?.ip_prefix)) {
    for (const p of items(doc.prefixes)) add(p.ip_prefix, 'Amazon Web Services')
    for (const p of items(doc.ipv6_prefixes)) add(p.ipv6_prefix, 'Amazon Web Services')
    return true
  }
  if (Array.isArray(doc.prefixes)) {
    for (const p of items(doc.prefixes)) {
      add(p.ipv4Prefix ?? p.ipv6Prefix, p.service === 'Google Cloud' ? 'Google Cloud' : 'Google')
    }
    return true
  }
  if (Array.isArray(doc.regions)) {
    for (const region of doc.regions as { cidrs?: unknown }[]) {
      for (const c of Array.isArray(region?.cidrs) ? (region.cidrs as { cidr?: unknown }[]) : []) {
        add(c?.cidr, 'Oracle Cloud')
      }
    }
    return true
  }
  return false
}

const ASN_LINE = /^(?:AS)?(\d{1,10})(?:\s*[,;\t ]\s*(.*))?$/i

/** `AS12345` or `12345` per line, optionally followed by a name (comma or whitespace separated). */
function parseAsnLines(text: string, named: boolean, out: Collector<AsnEntry>): void {
  let first = true
  for (const raw of text.split('\n')) {
    // A trailing `# …` is a comment, never an operator name: such notes are often guesses.
    const line = stripComment(raw)
    if (!line) continue
    const m = ASN_LINE.exec(line)
    const asn = m ? Number(m[1]) : 0
    if (m && asn > 0 && asn <= 0xffffffff) {
      out.entries.push({ asn, name: named ? cleanLabel(m[2]) : null })
    } else if (!(first && isHeader(line))) out.bad(line)
    first = false
  }
}

/** Parses one downloaded or imported document in the feed's upstream format. */
export function parseFeedText(def: Pick<FeedDef, 'kind' | 'format' | 'named'>, text: string): ParsedFeed {
  if (def.kind === 'asns') {
    const out = new Collector<AsnEntry>()
    parseAsnLines(text, def.named, out)
    return { kind: 'asns', entries: out.entries, malformed: out.malformed, samples: out.samples }
  }
  const out = new Collector<LabelledRange>()
  const format: FeedFormat = def.format
  if (format === 'ip-list') parseIpList(text, out)
  else if (format === 'relay-csv') parseRelayCsv(text, out)
  else if (!(text.trimStart().startsWith('{') && parseProviderJson(text, def.named, out))) {
    parseCidrLines(text, def.named, out)
  }
  return { kind: 'ranges', entries: out.entries, malformed: out.malformed, samples: out.samples }
}

/** Joins several parsed documents of the same feed. */
export function mergeParsed(parts: ParsedFeed[]): ParsedFeed {
  const malformed = parts.reduce((n, p) => n + p.malformed, 0)
  const samples = parts.flatMap((p) => p.samples).slice(0, MAX_SAMPLES)
  if (parts[0]?.kind === 'asns') {
    const entries = parts.flatMap((p) => (p.kind === 'asns' ? p.entries : []))
    return { kind: 'asns', entries, malformed, samples }
  }
  const entries = parts.flatMap((p) => (p.kind === 'ranges' ? p.entries : []))
  return { kind: 'ranges', entries, malformed, samples }
}

/**
 * The stored form: cidr-list (`cidr[,name]`) for range feeds, asn-list (`AS123[,name]`) for ASN
 * feeds, duplicates removed. Returns the text and the number of distinct entries.
 */
export function serializeFeed(parsed: ParsedFeed): { text: string; count: number } {
  const lines = new Set<string>()
  if (parsed.kind === 'asns') {
    for (const e of parsed.entries) lines.add(e.name ? `AS${e.asn},${e.name}` : `AS${e.asn}`)
  } else {
    for (const e of parsed.entries) {
      const cidr = formatCidr(e)
      lines.add(e.label ? `${cidr},${e.label}` : cidr)
    }
  }
  return { text: lines.size ? `${[...lines].join('\n')}\n` : '', count: lines.size }
}
