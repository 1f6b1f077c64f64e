import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { AsnTable, dateFromPackageVersion } from '../../../src/intel/ip/asn.js'
import { parseIp } from '../../../src/intel/ip/normalize.js'

const at = (table: AsnTable, text: string) => table.lookup(parseIp(text)!)

describe('AsnTable on the bundled ip-location-db data', () => {
  let table: AsnTable
  beforeAll(() => {
    table = new AsnTable()
  })

  it('loads every row of both CSVs and a deduplicated org table', () => {
    expect(table.v4Rows).toBeGreaterThan(400_000)
    expect(table.v6Rows).toBeGreaterThan(100_000)
    // Far fewer organisations than rows: names are stored once.
    expect(table.orgCount).toBeLessThan((table.v4Rows + table.v6Rows) / 4)
    expect(table.dataDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })

  it.each([
    ['8.8.8.8', 15169, 'Google LLC'],
    ['1.1.1.1', 13335, 'Cloudflare, Inc.'],
    ['3.215.1.1', 14618, 'Amazon.com, Inc.'],
    ['159.203.1.1', 14061, 'DigitalOcean, LLC'],
    ['88.198.1.1', 24940, 'Hetzner Online GmbH'],
    ['73.162.10.20', 7922, 'Comcast Cable Communications, LLC'],
    ['79.200.1.1', 3320, 'Deutsche Telekom AG'],
    ['86.150.1.1', 2856, 'British Telecommunications PLC'],
    ['2001:4860:4860::8888', 15169, 'Google LLC'],
    ['2a01:4f8::1', 24940, 'Hetzner Online GmbH'],
    ['2601:644::1', 7922, 'Comcast Cable Communications, LLC'],
    ['2003:e1::1', 3320, 'Deutsche Telekom AG'],
  ])('%s is AS%i (%s)', (addr, asn, org) => {
    expect(at(table, addr)).toEqual({ asn, org })
  })

  it('unescapes quoted organisation names', () => {
    // Row `35309568,35313663,201907,"LLC ""SPUTNIK"""` covers 2.26.200.0 - 2.26.215.255.
    expect(at(table, '2.26.200.1')).toEqual({ asn: 201907, org: 'LLC "SPUTNIK"' })
  })

  it('looks up IPv4-mapped IPv6 as IPv4', () => {
    expect(at(table, '::ffff:1.1.1.1')).toEqual(at(table, '1.1.1.1'))
  })

  it('returns null for private, reserved and unrouted space', () => {
    expect(at(table, '10.0.0.1')).toBeNull()
    expect(at(table, '192.168.1.1')).toBeNull()
    expect(at(table, '::1')).toBeNull()
    expect(at(table, 'fd00::1')).toBeNull()
  })
})

describe('AsnTable parsing', () => {
  it('reads both CSV shapes, skips blank lines and returns null outside every range', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-asn-'))
    writeFileSync(
      join(dir, 'asn-ipv4-num.csv'),
      '16777216,16777471,13335,"Cloudflare, Inc."\r\n\n16778240,16779263,38803,Gtelecom Pty Ltd\n',
    )
    writeFileSync(
      join(dir, 'asn-ipv6.csv'),
      '2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC\nbad,row,1,x\n2001:db8::,2001:db8:0:ffff:ffff:ffff:ffff:ffff,64500,"Doc ""Net"""\n',
    )
    writeFileSync(join(dir, 'package.json'), '{"version":"2.3.2026061719"}')
    const t = new AsnTable(dir)
    expect(t.v4Rows).toBe(2)
    expect(t.v6Rows).toBe(2)
    expect(t.dataDate).toBe('2026-06-17')
    expect(at(t, '1.0.0.255')).toEqual({ asn: 13335, org: 'Cloudflare, Inc.' })
    expect(at(t, '1.0.1.0')).toBeNull()
    expect(at(t, '1.0.4.0')).toEqual({ asn: 38803, org: 'Gtelecom Pty Ltd' })
    expect(at(t, '1.0.8.0')).toBeNull()
    expect(at(t, '2001::1')).toEqual({ asn: 6939, org: 'Hurricane Electric LLC' })
    expect(at(t, '2001:db8:0:ffff::1')).toEqual({ asn: 64500, org: 'Doc "Net"' })
    expect(at(t, '2001:db8:1::')).toBeNull()
    expect(at(t, '2000::')).toBeNull()
  })

  it('reads the data date from the package version', () => {
    expect(dateFromPackageVersion('2.3.2026061719')).toBe('2026-06-17')
    expect(dateFromPackageVersion('1.0.0')).toBeNull()
  })
})
