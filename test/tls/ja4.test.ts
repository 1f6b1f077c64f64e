import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assembleClientHello, parseClientHello } from '../../src/tls/client-hello.js'
import { isGrease, JA4_PATTERN, ja4, ja4FromBytes } from '../../src/tls/ja4.js'
import { type HelloSpec, helloMessage, helloRecords, hex } from './hello-builder.js'

/**
 * Published vectors of FoxIO's JA4 (FoxIO-LLC/ja4: technical_details/JA4.md and the expected outputs of
 * its python test data): the original-order lists (JA4_ro) are rebuilt into ClientHello bytes, with GREASE
 * values added where browsers put them, and must give the published JA4.
 */
const EDGE: HelloSpec = {
  // browsers-x509.pcapng, stream 0 (Microsoft Edge): JA4 t13d1516h2_8daaf6152771_e5627efa2ab1
  ciphers: hex('3a3a,1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035'),
  extensions: hex(
    '4a4a,000d,0000,000a,0005,000b,002b,001b,ff01,0033,4469,002d,0023,0017,0012,0010,0015,5a5a',
  ),
  alpn: ['h2', 'http/1.1'],
  signatureAlgorithms: hex('0403,0804,0401,0503,0805,0501,0806,0601'),
  supportedVersions: hex('6a6a,0304,0303'),
}

const SIGALG_GREASE: HelloSpec = {
  // sigalg-grease.pcapng: JA4 t13d1517h2_8daaf6152771_cb7bf5808d99 (a GREASE signature algorithm is ignored)
  ciphers: hex('1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035'),
  extensions: hex('fe0d,0010,0017,0033,44cd,ff01,000a,000d,0023,002b,000b,ca34,002d,0000,0005,001b,0012'),
  alpn: ['h2', 'http/1.1'],
  signatureAlgorithms: hex('9a9a,0904,0905,0906,0403,0804,0401,0503,0805,0501,0806,0601'),
  supportedVersions: hex('0304,0303'),
}

const hello = (spec: HelloSpec) => parseClientHello(helloMessage(spec).subarray(4))!

describe('JA4 of a ClientHello', () => {
  it('gives the published fingerprints', () => {
    expect(ja4FromBytes(helloRecords(EDGE))).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1')
    expect(ja4FromBytes(helloRecords(SIGALG_GREASE))).toBe('t13d1517h2_8daaf6152771_cb7bf5808d99')
  })

  it("matches the specification's worked hashes", () => {
    const sha12 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12)
    // The cipher example, and the extension list without signature algorithms (no trailing "_").
    expect(sha12('002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9')).toBe(
      '8daaf6152771',
    )
    const noSigs = ja4(hello({ ...EDGE, signatureAlgorithms: [] }))
    expect(noSigs.split('_')[2]).toBe('6d807ffa2a79')
  })

  it('does not depend on the order of ciphers and extensions (Chrome shuffles its extensions)', () => {
    const shuffled = {
      ...EDGE,
      ciphers: [...EDGE.ciphers].reverse(),
      extensions: [...EDGE.extensions].reverse(),
    }
    expect(ja4FromBytes(helloRecords(shuffled))).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1')
  })

  it('reads a hello spread over several records and waits for the rest of it', () => {
    const records = helloRecords(EDGE, 100)
    expect(assembleClientHello(records).status).toBe('complete')
    expect(ja4FromBytes(records)).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1')
    for (const cut of [0, 3, 5, 9, 104, 105, records.length - 1])
      expect(assembleClientHello(records.subarray(0, cut)).status, `cut at ${cut}`).toBe('incomplete')
  })

  it('section a: version, SNI, counts capped at 99, ALPN ends', () => {
    const a = (spec: Partial<HelloSpec>) => ja4(hello({ ...EDGE, ...spec })).split('_')[0]
    expect(a({ supportedVersions: hex('0303,0302') })).toBe('t12d1516h2')
    expect(a({ extensions: EDGE.extensions.filter((e) => e !== 0x002b), legacyVersion: 0x0301 })).toBe(
      't10d1515h2',
    )
    expect(a({ extensions: EDGE.extensions.filter((e) => e !== 0x002b), legacyVersion: 0x0300 })).toBe(
      'ts3d1515h2',
    )
    expect(a({ extensions: EDGE.extensions.filter((e) => e !== 0x0000) })).toBe('t13i1515h2')
    expect(a({ extensions: EDGE.extensions.filter((e) => e !== 0x0010) })).toBe('t13d151500')
    expect(a({ ciphers: Array.from({ length: 150 }, (_, i) => 0x0100 + i) })).toBe('t13d9916h2')
    expect(a({ alpn: ['http/1.1'] })).toBe('t13d1516h1')
    expect(a({ alpn: ['x'] })).toBe('t13d1516xx')
    expect(a({ alpn: [''] })).toBe('t13d151600')
    // Not alphanumeric at either end: the ends of the hex form (the specification's examples).
    expect(a({ alpn: [Buffer.from([0xab])] })).toBe('t13d1516ab')
    expect(a({ alpn: [Buffer.from([0xab, 0xcd])] })).toBe('t13d1516ad')
    expect(a({ alpn: [Buffer.from([0x30, 0xab])] })).toBe('t13d15163b')
    expect(a({ alpn: [Buffer.from([0x30, 0x31, 0xab, 0xcd])] })).toBe('t13d15163d')
    expect(a({ alpn: [Buffer.from([0x30, 0xab, 0xcd, 0x31])] })).toBe('t13d151601')
  })

  it('empty lists give zeros instead of the hash of nothing', () => {
    const bare = ja4(hello({ ciphers: [0x0a0a], extensions: [], legacyVersion: 0x0303 }))
    expect(bare).toBe('t12i000000_000000000000_000000000000')
  })

  it('knows GREASE exactly (RFC 8701)', () => {
    for (let i = 0; i < 16; i++) expect(isGrease(i * 0x1010 + 0x0a0a)).toBe(true)
    for (const v of [0x0a1a, 0x1a0a, 0x0a0b, 0x0000, 0xfefe]) expect(isGrease(v)).toBe(false)
  })
})

describe('malformed input', () => {
  it('gives null, never an exception, for anything but a complete ClientHello', () => {
    const valid = helloRecords(EDGE)
    const cases: Buffer[] = [
      Buffer.alloc(0),
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from([22, 3, 1, 0, 0]),
      Buffer.from([22, 3, 1, 0xff, 0xff, 1, 0, 0, 0]),
      Buffer.from([22, 3, 1, 0, 4, 2, 0, 0, 0]),
      Buffer.from([22, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff]),
      valid.subarray(0, valid.length - 1),
    ]
    for (const bytes of cases) expect(ja4FromBytes(bytes), bytes.toString('hex')).toBeNull()
  })

  it('survives random bytes and random damage to a real hello', () => {
    const valid = helloRecords(EDGE)
    let parsed = 0
    for (let i = 0; i < 20_000; i++) {
      let bytes: Buffer
      if (i % 2 === 0) {
        bytes = randomBytes(Math.floor(Math.random() * 600))
        // Half of them start like a handshake record so the parser gets past the first checks.
        if (i % 4 === 0 && bytes.length > 9)
          bytes.set([22, 3, 1, bytes.length >> 8, (bytes.length - 5) & 0xff, 1])
      } else {
        bytes = Buffer.from(valid)
        for (let flips = 1 + Math.floor(Math.random() * 4); flips > 0; flips--)
          bytes[Math.floor(Math.random() * bytes.length)] = Math.floor(Math.random() * 256)
        if (Math.random() < 0.3) bytes = bytes.subarray(0, Math.floor(Math.random() * bytes.length))
      }
      const out = ja4FromBytes(bytes)
      if (out !== null) {
        parsed++
        expect(out).toMatch(JA4_PATTERN)
      }
      // The pieces are exported too; they must not throw either.
      const found = assembleClientHello(bytes)
      if (found.status === 'complete') parseClientHello(found.body)
    }
    // Damaged hellos often stay parseable (a flipped cipher byte is still a cipher).
    expect(parsed).toBeGreaterThan(100)
  })
})
