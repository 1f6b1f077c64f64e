import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readBsonStrings } from '../../../src/intel/phone/bson-strings.js'
import { loadCarrierTable } from '../../../src/intel/phone/carrier.js'
import { createPhoneIntel } from '../../../src/intel/phone/index.js'

/** Encodes a flat document of string values the way the carrier package stores its tables. */
function bson(entries: Record<string, string> | Array<[string, string]>): Buffer {
  const parts: Buffer[] = []
  for (const [key, value] of Array.isArray(entries) ? entries : Object.entries(entries)) {
    const text = Buffer.from(value, 'utf8')
    const len = Buffer.alloc(4)
    len.writeInt32LE(text.length + 1)
    parts.push(Buffer.from([0x02]), Buffer.from(`${key}\0`, 'utf8'), len, text, Buffer.from([0]))
  }
  const body = Buffer.concat([...parts, Buffer.from([0])])
  const size = Buffer.alloc(4)
  size.writeInt32LE(body.length + 4)
  return Buffer.concat([size, body])
}

const tmp = mkdtempSync(join(tmpdir(), 'verdict-carrier-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('readBsonStrings', () => {
  it('reads keys and UTF-8 values in order', () => {
    const pairs: Array<[string, string]> = [
      ['7400', 'Three'],
      ['861', 'Ñandú Telecom'],
    ]
    expect(readBsonStrings(bson(pairs))).toEqual([
      ['7400', 'Three'],
      ['861', 'Ñandú Telecom'],
    ])
  })

  it('rejects truncated documents and other value types', () => {
    const doc = bson({ '74': 'Three' })
    expect(() => readBsonStrings(doc.subarray(0, doc.length - 3))).toThrow()
    const int32 = Buffer.from([13, 0, 0, 0, 0x10, 0x61, 0, 1, 0, 0, 0, 0, 0])
    expect(() => readBsonStrings(int32)).toThrow(/unsupported/)
  })
})

describe('loadCarrierTable', () => {
  const dir = join(tmp, 'en')
  mkdirSync(dir)
  writeFileSync(join(dir, '44.bson'), bson({ '74': 'Broad Mobile', '7400': 'Three', '74001': 'Narrow Ltd' }))
  writeFileSync(join(dir, '1.bson'), bson({ '2423': 'Aliv' }))
  writeFileSync(join(dir, 'README.txt'), 'not a table')

  it('picks the longest matching prefix per calling code', () => {
    const table = loadCarrierTable(dir)
    expect(table.loaded).toBe(true)
    expect(table.entries).toBe(4)
    expect(table.lookup('44', '7400123456')).toBe('Narrow Ltd')
    expect(table.lookup('44', '7400234567')).toBe('Three')
    expect(table.lookup('44', '7499123456')).toBe('Broad Mobile')
    expect(table.lookup('44', '7500123456')).toBeNull()
    expect(table.lookup('1', '2423571234')).toBe('Aliv')
    expect(table.lookup('49', '1701234567')).toBeNull()
  })

  it('reports a missing directory as not loaded', () => {
    const table = loadCarrierTable(join(tmp, 'nope'))
    expect(table).toMatchObject({ loaded: false, entries: 0 })
    expect(table.lookup('44', '7400123456')).toBeNull()
  })
})

describe('carrier names from the packaged libphonenumber data', () => {
  const intel = createPhoneIntel()

  it.each([
    ['+44 7400 123456', 'Three'],
    ['+49 170 1234567', 'T-Mobile'],
    ['+33 7 81 23 45 67', 'Free Mobile'],
    ['+91 70000 12345', 'Reliance Jio'],
    ['+81 80-1234-5678', 'NTT Docomo'],
    ['+61 400 123 456', 'Telstra'],
    ['+234 805 123 4567', 'Glo'],
    ['+234 803 123 4567', 'MTN'],
    ['+55 21 99876 5432', 'Vivo'],
    ['+1 242 357 1234', 'BaTelCo'],
  ])('%s → %s', (input, carrier) => {
    expect(intel.analyze(input)).toMatchObject({ lineType: 'mobile', carrier })
  })

  it('names no carrier for fixed lines, service numbers or invalid numbers', () => {
    expect(intel.analyze('+44 20 7946 0958').carrier).toBeNull()
    expect(intel.analyze('+44 800 123 4567').carrier).toBeNull()
    expect(intel.analyze('+44 56 1234 5678').carrier).toBeNull()
    expect(intel.analyze('+44 7700 900123').carrier).toBeNull()
  })

  it('has no carrier data for the United States', () => {
    expect(intel.analyze('+1 202-456-1111').carrier).toBeNull()
  })
})
