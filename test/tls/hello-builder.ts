/** Builds ClientHello bytes for the tests: the fields JA4 reads, in the order given, GREASE included. */

export interface HelloSpec {
  legacyVersion?: number
  ciphers: number[]
  /** Extension types in wire order; the four JA4 reads get real contents from the fields below. */
  extensions: number[]
  serverName?: string
  alpn?: (string | Buffer)[]
  signatureAlgorithms?: number[]
  supportedVersions?: number[]
}

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff])
const u24 = (n: number) => Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff])
const list16 = (values: number[]) => Buffer.concat(values.map(u16))
const vec8 = (b: Buffer) => Buffer.concat([Buffer.from([b.length]), b])
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b])

function extensionData(type: number, spec: HelloSpec): Buffer {
  switch (type) {
    case 0x0000: {
      const name = Buffer.from(spec.serverName ?? 'example.com')
      return vec16(Buffer.concat([Buffer.from([0]), vec16(name)]))
    }
    case 0x0010:
      return vec16(Buffer.concat((spec.alpn ?? ['h2']).map((p) => vec8(Buffer.from(p)))))
    case 0x000d:
      return vec16(list16(spec.signatureAlgorithms ?? []))
    case 0x002b:
      return vec8(list16(spec.supportedVersions ?? [0x0304, 0x0303]))
    default:
      return Buffer.alloc(0)
  }
}

/** The handshake message (type 1, 3-byte length, body). */
export function helloMessage(spec: HelloSpec): Buffer {
  const extensions = Buffer.concat(
    spec.extensions.map((t) => Buffer.concat([u16(t), vec16(extensionData(t, spec))])),
  )
  const body = Buffer.concat([
    u16(spec.legacyVersion ?? 0x0303),
    Buffer.alloc(32, 7),
    vec8(Buffer.alloc(32, 9)),
    vec16(list16(spec.ciphers)),
    vec8(Buffer.from([0])),
    vec16(extensions),
  ])
  return Buffer.concat([Buffer.from([1]), u24(body.length), body])
}

/** The message in TLS records of at most `recordSize` bytes each (a hello may span records). */
export function helloRecords(spec: HelloSpec, recordSize = 16_384): Buffer {
  const message = helloMessage(spec)
  const records: Buffer[] = []
  for (let at = 0; at < message.length; at += recordSize) {
    const fragment = message.subarray(at, at + recordSize)
    records.push(Buffer.concat([Buffer.from([22, 3, 1]), u16(fragment.length), fragment]))
  }
  return Buffer.concat(records)
}

export const hex = (list: string) => list.split(',').map((h) => Number.parseInt(h, 16))
