/**
 * A bounds-checked reader of the TLS ClientHello, the first handshake message a client sends. Pure: bytes
 * in, fields out. Anything malformed gives `null` (or `invalid`), never an exception, because the bytes
 * come straight from an unauthenticated socket.
 */

const RECORD_HEADER = 5
const HANDSHAKE = 22
const CLIENT_HELLO = 1
/** A record's body may not exceed 2^14 bytes (RFC 8446 5.1). */
const MAX_RECORD = 16_384
/**
 * The largest ClientHello read. Real ones are well under 4 KiB, even with post-quantum key shares and
 * a resumption ticket; a larger one is not fingerprinted (the connection itself still goes on).
 */
export const MAX_CLIENT_HELLO = 32_768

/** The fields JA4 needs, as sent (GREASE values included; JA4 drops them). */
export interface ClientHello {
  /** legacy_version of the hello, e.g. 0x0303. */
  version: number
  ciphers: number[]
  /** Extension types in the order sent. */
  extensions: number[]
  /** Versions listed in supported_versions (0x002b); empty without that extension. */
  supportedVersions: number[]
  /** The first ALPN protocol name as bytes; null without ALPN or with an empty list. */
  firstAlpn: Buffer | null
  /** signature_algorithms (0x000d) in the order sent. */
  signatureAlgorithms: number[]
}

export type Assembled =
  | { status: 'complete'; body: Buffer }
  | { status: 'incomplete' }
  | { status: 'invalid'; why: string }

/**
 * Finds the ClientHello at the start of a TCP stream: handshake records from offset 0, whose fragments
 * are joined until the whole message is there (a hello may span records). `incomplete` means more
 * bytes are needed; `body` is the handshake message without its 4-byte header.
 */
export function assembleClientHello(stream: Buffer): Assembled {
  const fragments: Buffer[] = []
  let have = 0
  let need = -1
  let at = 0
  while (need < 0 || have < need) {
    if (stream.length < at + RECORD_HEADER) return { status: 'incomplete' }
    if (stream[at] !== HANDSHAKE) return { status: 'invalid', why: 'not a TLS handshake record' }
    if (stream[at + 1] !== 3) return { status: 'invalid', why: 'unknown record version' }
    const length = stream.readUInt16BE(at + 3)
    if (length === 0 || length > MAX_RECORD) return { status: 'invalid', why: 'bad record length' }
    const end = at + RECORD_HEADER + length
    // Only the part of the record received so far; the header fields are read once 4 bytes are in.
    const fragment = stream.subarray(at + RECORD_HEADER, Math.min(end, stream.length))
    fragments.push(fragment)
    have += fragment.length
    if (need < 0 && have >= 4) {
      const head = Buffer.concat(fragments).subarray(0, 4)
      if (head[0] !== CLIENT_HELLO)
        return { status: 'invalid', why: 'first handshake message is not a ClientHello' }
      need = 4 + head.readUIntBE(1, 3)
      if (need > MAX_CLIENT_HELLO) return { status: 'invalid', why: 'ClientHello too large' }
    }
    if (end > stream.length) {
      if (need >= 0 && have >= need) break
      return { status: 'incomplete' }
    }
    at = end
  }
  return { status: 'complete', body: Buffer.concat(fragments).subarray(4, need) }
}

/** A cursor that refuses to read past the end of its buffer (returns null instead). */
class Reader {
  constructor(
    private readonly buf: Buffer,
    private at = 0,
  ) {}
  get left(): number {
    return this.buf.length - this.at
  }
  u8(): number | null {
    if (this.left < 1) return null
    return this.buf[this.at++]!
  }
  u16(): number | null {
    if (this.left < 2) return null
    const v = this.buf.readUInt16BE(this.at)
    this.at += 2
    return v
  }
  bytes(n: number): Buffer | null {
    if (n < 0 || this.left < n) return null
    const out = this.buf.subarray(this.at, this.at + n)
    this.at += n
    return out
  }
  /** A vector with a 1- or 2-byte length prefix. */
  vector(prefix: 1 | 2): Buffer | null {
    const n = prefix === 1 ? this.u8() : this.u16()
    return n === null ? null : this.bytes(n)
  }
}

/** Big-endian 16-bit values of a byte string; null when its length is odd. */
function u16List(buf: Buffer): number[] | null {
  if (buf.length % 2 !== 0) return null
  const out: number[] = []
  for (let i = 0; i < buf.length; i += 2) out.push(buf.readUInt16BE(i))
  return out
}

const EXT_ALPN = 0x0010
const EXT_SIGNATURE_ALGORITHMS = 0x000d
const EXT_SUPPORTED_VERSIONS = 0x002b

/**
 * Parses a ClientHello body (see assembleClientHello). Null when the fixed part is malformed; the
 * contents of the three extensions JA4 reads are taken leniently (a malformed one counts as empty),
 * since the extension list itself is what identifies the client.
 */
export function parseClientHello(body: Buffer): ClientHello | null {
  const r = new Reader(body)
  const version = r.u16()
  if (version === null || r.bytes(32) === null) return null
  const sessionId = r.vector(1)
  if (sessionId === null || sessionId.length > 32) return null
  const cipherBytes = r.vector(2)
  const ciphers = cipherBytes && u16List(cipherBytes)
  if (!ciphers) return null
  if (r.vector(1) === null) return null
  const hello: ClientHello = {
    version,
    ciphers,
    extensions: [],
    supportedVersions: [],
    firstAlpn: null,
    signatureAlgorithms: [],
  }
  // Hellos from before TLS 1.2 may end here, without an extension block.
  if (r.left === 0) return hello
  const block = r.vector(2)
  if (block === null || r.left !== 0) return null
  const ext = new Reader(block)
  while (ext.left > 0) {
    const type = ext.u16()
    const data = ext.vector(2)
    if (type === null || data === null) return null
    hello.extensions.push(type)
    if (type === EXT_ALPN) hello.firstAlpn = firstAlpn(data)
    else if (type === EXT_SIGNATURE_ALGORITHMS)
      hello.signatureAlgorithms = u16List(new Reader(data).vector(2) ?? Buffer.alloc(0)) ?? []
    else if (type === EXT_SUPPORTED_VERSIONS)
      hello.supportedVersions = u16List(new Reader(data).vector(1) ?? Buffer.alloc(0)) ?? []
  }
  return hello
}

/** The first name of an ALPN extension (RFC 7301: a 2-byte list length, then 1-byte-prefixed names). */
function firstAlpn(data: Buffer): Buffer | null {
  const list = new Reader(data).vector(2)
  if (list === null) return null
  const name = new Reader(list).vector(1)
  return name && name.length > 0 ? name : null
}
