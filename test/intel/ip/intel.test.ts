import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { importFeed } from '../../../src/intel/feeds/update.js'
import { type IpIntel, loadIpIntel } from '../../../src/intel/ip/index.js'
import { parseIp } from '../../../src/intel/ip/normalize.js'

const FIXTURES = join(import.meta.dirname, '../../fixtures/feeds')

describe('IpIntel with no feeds loaded', () => {
  let intel: IpIntel
  beforeAll(async () => {
    intel = await loadIpIntel({ feedsDir: await mkdtemp(join(tmpdir(), 'verdict-intel-empty-')) })
  })

  it('returns null for input that is not an IP', () => {
    expect(intel.lookup('not-an-ip')).toBeNull()
    expect(intel.lookup('1.2.3.4/24')).toBeNull()
  })

  it('answers the same for an address parsed once (the scoring path) as for its text', () => {
    for (const raw of [
      '8.8.8.8',
      ' 1.1.1.1 ',
      '::ffff:8.8.4.4',
      '2001:4860:4860::8888',
      '2003:E1::1',
      'fe80::1%eth0',
    ]) {
      const parsed = parseIp(raw)
      expect(parsed).not.toBeNull()
      expect(intel.lookupParsed(parsed!)).toEqual(intel.lookup(raw))
    }
  })

  it('describes a Google DNS address', () => {
    expect(intel.lookup('8.8.8.8')).toEqual({
      ip: '8.8.8.8',
      version: 4,
      prefix: '8.8.8.0/24',
      asn: 15169,
      org: 'Google LLC',
      isp: 'Google LLC',
      country: 'US',
      city: 'Mountain View',
      isDatacenter: true,
      datacenterProvider: 'Google',
      isTor: false,
      isVpn: false,
      vpnProvider: null,
      isProxy: false,
      isPrivacyRelay: false,
      known: { tor: false, vpn: false, proxy: false, relay: false },
    })
  })

  it.each([
    ['1.1.1.1', 13335, 'Cloudflare', 'AU'],
    ['3.215.1.1', 14618, 'Amazon Web Services', 'US'],
    ['159.203.1.1', 14061, 'DigitalOcean', 'CA'],
    ['88.198.1.1', 24940, 'Hetzner', 'DE'],
    ['2001:4860:4860::8888', 15169, 'Google', 'US'],
    ['2a01:4f8::1', 24940, 'Hetzner', 'DE'],
  ])('%s is a datacenter address (AS%i, %s)', (addr, asn, provider, country) => {
    expect(intel.lookup(addr)).toMatchObject({
      asn,
      isDatacenter: true,
      datacenterProvider: provider,
      country,
    })
  })

  it.each([
    ['73.162.10.20', 7922, 'US'],
    ['79.200.1.1', 3320, 'DE'],
    ['86.150.1.1', 2856, 'GB'],
    ['2601:644::1', 7922, 'US'],
    ['2003:e1::1', 3320, 'DE'],
  ])('residential %s is not a datacenter address (AS%i)', (addr, asn, country) => {
    expect(intel.lookup(addr)).toMatchObject({ asn, country, isDatacenter: false, datacenterProvider: null })
  })

  it('normalises IPv4-mapped IPv6 to the IPv4 answer', () => {
    expect(intel.lookup('::ffff:1.1.1.1')).toEqual(intel.lookup('1.1.1.1'))
    expect(intel.lookup('::ffff:1.1.1.1')?.ip).toBe('1.1.1.1')
  })

  it('gives IPv6 results with a /48 prefix and a city', () => {
    expect(intel.lookup('2A01:04F8:0000:0000::1')).toMatchObject({
      ip: '2a01:4f8::1',
      version: 6,
      prefix: '2a01:4f8::/48',
      country: 'DE',
      city: 'Nuremberg',
    })
  })

  it('leaves feed-backed signals unknown rather than clean', () => {
    const r = intel.lookup('185.220.101.1')!
    expect(r.isTor).toBe(false)
    expect(r.known).toEqual({ tor: false, vpn: false, proxy: false, relay: false })
  })

  it('lists the packaged sources with dates, licences and the DB-IP attribution', () => {
    const sources = intel.sources()
    expect(sources.map((s) => s.name)).toEqual([
      'asn',
      'geo-country',
      'geo-city',
      'vpn-operators',
      'relay-egress',
      'tor',
      'relay',
      'vpn',
      'vpn-asn',
      'proxy',
      'proxy-asn',
      'datacenter',
    ])
    const city = sources.find((s) => s.name === 'geo-city')!
    expect(city).toMatchObject({
      kind: 'package',
      licence: 'CC BY 4.0',
      attribution: 'IP geolocation by DB-IP',
      attributionUrl: 'https://db-ip.com',
      loaded: true,
    })
    expect(city.dataDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(sources.find((s) => s.name === 'asn')?.entries).toBeGreaterThan(500_000)
    expect(sources.find((s) => s.name === 'tor')).toMatchObject({
      kind: 'feed',
      loaded: false,
      entries: 0,
      dataDate: null,
    })
  })
})

describe('IpIntel with feeds', () => {
  let intel: IpIntel
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'verdict-intel-feeds-'))
    await importFeed('tor', join(FIXTURES, 'tor-bulk-exit-list.txt'), { dir })
    await importFeed('relay', join(FIXTURES, 'egress-ip-ranges.csv'), { dir })
    // X4BNet-style VPN list: like the real one it also lists relay egress ranges.
    await importFeed('vpn', join(FIXTURES, 'vpn-x4b-ipv4.txt'), { dir })
    await importFeed('vpn-asn', join(FIXTURES, 'vpn-asn.txt'), { dir })
    await importFeed('proxy', join(FIXTURES, 'firehol_proxies.netset'), { dir })
    await importFeed('datacenter', join(FIXTURES, 'google-cloud.json'), { dir })
    intel = await loadIpIntel({ feedsDir: dir })
  })

  it('marks every loaded signal as known', () => {
    expect(intel.lookup('8.8.8.8')?.known).toEqual({ tor: true, vpn: true, proxy: true, relay: true })
  })

  it('flags Tor exits, IPv4 and IPv6', () => {
    expect(intel.lookup('185.220.101.1')).toMatchObject({ isTor: true, isVpn: false, isProxy: false })
    expect(intel.lookup('2001:67c:e60:c0c:192:42:116:16')?.isTor).toBe(true)
    expect(intel.lookup('185.220.101.2')?.isTor).toBe(false)
  })

  it('names a VPN operator only when a list names it', () => {
    // 45.83.220.69 is listed without a name, but its AS is listed with one.
    expect(intel.lookup('45.83.220.69')).toMatchObject({ isVpn: true, vpnProvider: 'Mullvad VPN' })
    // M247 is on the ASN list only with a comment: flagged, not named.
    expect(intel.lookup('2.57.28.1')).toMatchObject({ asn: 9009, isVpn: true, vpnProvider: null })
    expect(intel.lookup('73.162.10.20')).toMatchObject({ isVpn: false, vpnProvider: null })
  })

  it('flags listed proxies', () => {
    expect(intel.lookup('1.82.216.135')).toMatchObject({ isProxy: true })
    expect(intel.lookup('1.82.216.136')).toMatchObject({ isProxy: false })
  })

  it('uses the provider name from the datacenter feed over the AS name', () => {
    // Google Cloud range announced in Google's own AS15169.
    expect(intel.lookup('34.1.208.1')).toMatchObject({
      asn: 15169,
      isDatacenter: true,
      datacenterProvider: 'Google Cloud',
    })
    expect(intel.lookup('8.8.8.8')).toMatchObject({ isDatacenter: true, datacenterProvider: 'Google' })
  })

  it('reports a privacy-relay egress only as a relay, never datacenter, proxy or VPN', () => {
    // In Cloudflare's AS13335 (curated hosting), on the VPN list and on the proxy list.
    expect(intel.lookup('104.28.37.44')).toMatchObject({
      asn: 13335,
      isPrivacyRelay: true,
      isDatacenter: false,
      datacenterProvider: null,
      isVpn: false,
      vpnProvider: null,
      isProxy: false,
    })
    // IPv6 egress in Akamai's AS20940 (curated hosting).
    expect(intel.lookup('2a02:26f7:b3c0:4000::1')).toMatchObject({
      asn: 20940,
      isPrivacyRelay: true,
      isDatacenter: false,
    })
    // A Cloudflare address in neither the feed nor the built-in table (a WARP egress) is still hosting.
    expect(intel.lookup('104.28.207.215')).toMatchObject({
      isPrivacyRelay: false,
      isDatacenter: true,
      isVpn: false,
    })
  })

  it('picks up new feed data on reload()', async () => {
    expect(intel.lookup('64.0.0.1')?.isProxy).toBe(false)
    const own = await mkdtemp(join(tmpdir(), 'verdict-intel-reload-'))
    const reloading = await loadIpIntel({ feedsDir: own, city: false })
    expect(reloading.lookup('185.220.101.1')?.known.tor).toBe(false)
    await importFeed('tor', join(FIXTURES, 'tor-bulk-exit-list.txt'), { dir: own })
    await reloading.reload()
    expect(reloading.lookup('185.220.101.1')).toMatchObject({ isTor: true, known: { tor: true }, city: null })
    const tor = reloading.sources().find((s) => s.name === 'tor')
    expect(tor).toMatchObject({ loaded: true, entries: 5 })
    expect(tor?.source).toMatch(/^file:.*tor-bulk-exit-list\.txt$/)
    expect(tor?.dataDate).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    expect(reloading.sources().find((s) => s.name === 'geo-city')?.loaded).toBe(false)
  })
})
