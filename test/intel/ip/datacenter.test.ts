import { beforeAll, describe, expect, it } from 'vitest'
import { AsnTable } from '../../../src/intel/ip/asn.js'
import {
  classifyDatacenter,
  HOSTING_ASNS,
  hostingProviderForAsn,
  orgLooksLikeHosting,
} from '../../../src/intel/ip/datacenter.js'
import { parseIp } from '../../../src/intel/ip/normalize.js'

describe('organisation-name rules', () => {
  it.each([
    'Servers Australia Pty. Ltd',
    'Host Europe GmbH',
    'Colocation America Corporation',
    'IOMART CLOUD SERVICES LIMITED',
    'Yandex.Cloud LLC',
    'UK Dedicated Servers Limited',
    'EO Data Center',
    "Joe's Datacenter, LLC",
    'Micron21 Datacentre Pty Ltd',
    'InMotion Hosting, Inc.',
    'Broadband Hosting B.V.',
    'CHINANET SiChuan Telecom Internet Data Center',
  ])('%s reads as hosting', (org) => {
    expect(orgLooksLikeHosting(org)).toBe(true)
  })

  it.each([
    'Comcast Cable Communications, LLC',
    'Deutsche Telekom AG',
    'British Telecommunications PLC',
    'Virgin Media Limited',
    'Charter Communications Inc',
    'Verizon Business',
    'Orange S.A.',
    'Free SAS',
    'Telstra Limited',
    'Andrews & Arnold Ltd',
    // Access networks whose names contain a hosting-ish word.
    'The Cloud Networks Limited',
    'White Cloud Communications US, LLC',
    'Cloud 9 Wireless LLC',
    'CLOUD TELECOM SAS',
    'Hostelling International',
  ])('%s does not read as hosting', (org) => {
    expect(orgLooksLikeHosting(org)).toBe(false)
  })

  it('handles missing names', () => {
    expect(orgLooksLikeHosting(null)).toBe(false)
    expect(orgLooksLikeHosting('')).toBe(false)
  })
})

describe('curated hosting ASNs', () => {
  it('names the major clouds', () => {
    expect(hostingProviderForAsn(16509)).toBe('Amazon Web Services')
    expect(hostingProviderForAsn(396982)).toBe('Google Cloud')
    expect(hostingProviderForAsn(15169)).toBe('Google')
    expect(hostingProviderForAsn(8075)).toBe('Microsoft Azure')
    expect(hostingProviderForAsn(14061)).toBe('DigitalOcean')
    expect(hostingProviderForAsn(24940)).toBe('Hetzner')
    expect(hostingProviderForAsn(20473)).toBe('Vultr')
    expect(hostingProviderForAsn(7922)).toBeNull()
    expect(hostingProviderForAsn(null)).toBeNull()
  })
})

describe('classifyDatacenter', () => {
  it('prefers the feed name, then the curated name, then the organisation', () => {
    expect(classifyDatacenter({ asn: 15169, org: 'Google LLC', feed: 'Google Cloud' })).toEqual({
      isDatacenter: true,
      provider: 'Google Cloud',
    })
    expect(classifyDatacenter({ asn: 15169, org: 'Google LLC', feed: null })).toEqual({
      isDatacenter: true,
      provider: 'Google',
    })
    expect(classifyDatacenter({ asn: 64500, org: 'Some Net', feed: null })).toEqual({
      isDatacenter: true,
      provider: 'Some Net',
    })
    expect(classifyDatacenter({ asn: 15169, org: 'Google LLC' })).toEqual({
      isDatacenter: true,
      provider: 'Google',
    })
    expect(classifyDatacenter({ asn: 1, org: 'Host Europe GmbH' })).toEqual({
      isDatacenter: true,
      provider: 'Host Europe GmbH',
    })
    expect(classifyDatacenter({ asn: null, org: null })).toEqual({ isDatacenter: false, provider: null })
  })
})

describe('datacenter detection on real addresses (ASN data, no feeds)', () => {
  let table: AsnTable
  beforeAll(() => {
    table = new AsnTable()
  })
  const classify = (addr: string) => {
    const info = table.lookup(parseIp(addr)!)
    return classifyDatacenter({ asn: info?.asn ?? null, org: info?.org ?? null })
  }

  it('only lists AS numbers that exist in the ASN data', () => {
    const missing = [...HOSTING_ASNS.keys()].filter((asn) => table.orgForAsn(asn) === null)
    expect(missing).toEqual([])
    expect(table.orgForAsn(14061)).toBe('DigitalOcean, LLC')
  })

  it.each([
    ['3.215.1.1', 'Amazon Web Services'], // EC2 us-east-1
    ['8.8.8.8', 'Google'],
    ['1.1.1.1', 'Cloudflare'],
    ['159.203.1.1', 'DigitalOcean'],
    ['139.59.1.1', 'DigitalOcean'],
    ['88.198.1.1', 'Hetzner'],
    ['20.1.1.1', 'Microsoft Azure'],
    ['2001:4860:4860::8888', 'Google'],
    ['2a01:4f8::1', 'Hetzner'],
    ['2600:1f18::1', 'Amazon Web Services'],
  ])('%s is hosting (%s)', (addr, provider) => {
    expect(classify(addr)).toEqual({ isDatacenter: true, provider })
  })

  it.each([
    '73.162.10.20', // Comcast
    '24.5.1.1', // Comcast
    '79.200.1.1', // Deutsche Telekom
    '86.150.1.1', // BT
    '82.64.1.1', // Free
    '71.105.1.1', // Verizon
    '77.20.1.1', // Vodafone DE
    '90.1.1.1', // Orange FR
    '2601:644::1', // Comcast
    '2003:e1::1', // Deutsche Telekom
    '2a00:23c4::1', // BT
  ])('residential %s is not hosting', (addr) => {
    expect(classify(addr)).toEqual({ isDatacenter: false, provider: null })
  })
})
