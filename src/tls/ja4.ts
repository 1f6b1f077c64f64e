import { createHash } from 'node:crypto'
import { assembleClientHello, type ClientHello, parseClientHello } from './client-hello.js'

/**
 * JA4, FoxIO's TLS client fingerprint (the JA4 part of JA4+, BSD 3-Clause; written here from its
 * published specification, technical_details/JA4.md in FoxIO-LLC/ja4):
 *
 *   t13d1516h2_8daaf6152771_e5627efa2ab1
 *   a: transport, TLS version, SNI (d) or not (i), cipher count, extension count, first ALPN's ends
 *   b: first 12 hex of SHA-256 of the sorted cipher list
 *   c: first 12 hex of SHA-256 of the sorted extension list without SNI and ALPN, "_", then the
 *      signature algorithms in the order sent
 *
 * GREASE values (RFC 8701) are ignored everywhere, and sorting makes the fingerprint independent of the
 * extension order a browser randomises per connection.
 */

/** A JA4 string: what a trusted edge's header must look like to be taken. */
export const JA4_PATTERN =
  /^[tqd](?:1[0-3]|s[23]|d[1-3]|00)[di]\d{4}[0-9A-Za-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/

/** RFC 8701: 0x0a0a, 0x1a1a, ... 0xfafa. */
export function isGrease(value: number): boolean {
  return (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff)
}

const VERSIONS: Record<number, string> = {
  772: '13',
  771: '12',
  770: '11',
  769: '10',
  768: 's3',
  2: 's2',
  65279: 'd1',
  65277: 'd2',
  65276: 'd3',
}

const EXT_SNI = 0x0000
const EXT_ALPN = 0x0010

const hex4 = (n: number) => n.toString(16).padStart(4, '0')
const count2 = (n: number) => String(Math.min(n, 99)).padStart(2, '0')
const hash12 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12)
const isAlnum = (byte: number) =>
  (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)

/** Highest non-GREASE supported_versions entry, else the hello's own version. */
function version(hello: ClientHello): string {
  const listed = hello.supportedVersions.filter((v) => !isGrease(v))
  const v = listed.length > 0 ? Math.max(...listed) : hello.version
  return VERSIONS[v] ?? '00'
}

/** First and last character of the first ALPN name; its hex form's ends when either is not alphanumeric. */
function alpn(name: Buffer | null): string {
  if (name === null || name.length === 0) return '00'
  const first = name[0]!
  const last = name[name.length - 1]!
  if (isAlnum(first) && isAlnum(last)) return String.fromCharCode(first, last)
  const hex = name.toString('hex')
  return hex[0]! + hex[hex.length - 1]!
}

/** The JA4 of a parsed ClientHello. `transport`: t (TLS over TCP), q (QUIC) or d (DTLS). */
export function ja4(hello: ClientHello, transport: 't' | 'q' | 'd' = 't'): string {
  const ciphers = hello.ciphers.filter((c) => !isGrease(c))
  const extensions = hello.extensions.filter((e) => !isGrease(e))
  const sni = extensions.includes(EXT_SNI) ? 'd' : 'i'
  const a = `${transport}${version(hello)}${sni}${count2(ciphers.length)}${count2(extensions.length)}${alpn(hello.firstAlpn)}`

  const b = ciphers.length === 0 ? '000000000000' : hash12(ciphers.map(hex4).sort().join(','))

  const sortedExtensions = extensions
    .filter((e) => e !== EXT_SNI && e !== EXT_ALPN)
    .map(hex4)
    .sort()
    .join(',')
  const signatures = hello.signatureAlgorithms
    .filter((s) => !isGrease(s))
    .map(hex4)
    .join(',')
  const c =
    sortedExtensions === ''
      ? '000000000000'
      : hash12(signatures === '' ? sortedExtensions : `${sortedExtensions}_${signatures}`)
  return `${a}_${b}_${c}`
}

/**
 * The JA4 of the ClientHello at the start of `stream` (the bytes a TLS client sends first), or null
 * when they are not a complete, well-formed ClientHello. Never throws.
 */
export function ja4FromBytes(stream: Buffer): string | null {
  try {
    const found = assembleClientHello(stream)
    if (found.status !== 'complete') return null
    const hello = parseClientHello(found.body)
    return hello ? ja4(hello) : null
  } catch {
    // The readers above are bounds-checked; this only keeps a bug of ours off the connection path.
    return null
  }
}
