import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSettings } from '../../../src/config/settings.js'
import { FEEDS, feedUrlEnvVar } from '../../../src/intel/feeds/catalog.js'
import { cleanLabel, mergeParsed, parseFeedText, serializeFeed } from '../../../src/intel/feeds/formats.js'

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '../../fixtures/feeds', name), 'utf8')
const stored = (feed: keyof typeof FEEDS, file: string) =>
  serializeFeed(parseFeedText(FEEDS[feed], fixture(file)))

describe('Tor bulk exit list', () => {
  it('keeps one /32 or /128 per address, skips comments and counts bad lines', () => {
    const parsed = parseFeedText(FEEDS.tor, fixture('tor-bulk-exit-list.txt'))
    expect(parsed.entries).toHaveLength(5)
    expect(parsed.malformed).toBe(1)
    expect(parsed.samples).toEqual(['this-is-not-an-ip'])
    expect(serializeFeed(parsed).text).toBe(
      '185.220.101.1/32\n185.220.101.33/32\n192.42.116.16/32\n2001:67c:e60:c0c:192:42:116:16/128\n171.25.193.25/32\n',
    )
  })

  it('also reads ExitAddress lines of the exit-addresses document', () => {
    const parsed = parseFeedText(
      FEEDS.tor,
      'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E\nExitAddress 162.247.74.201 2024-06-10 09:03:56\n',
    )
    expect(serializeFeed(parsed).text).toBe('162.247.74.201/32\n')
    expect(parsed.malformed).toBe(1)
  })
})

describe('Apple egress-ip-ranges.csv', () => {
  it('keeps the prefix column of each row', () => {
    const parsed = parseFeedText(FEEDS.relay, fixture('egress-ip-ranges.csv'))
    expect(parsed.malformed).toBe(1)
    expect(serializeFeed(parsed)).toEqual({
      text: '104.28.37.40/29\n172.224.226.0/27\n172.225.0.0/16\n2a02:26f7:b3c0:4000::/64\n2606:54c0:1a40::/45\n',
      count: 5,
    })
  })
})

describe('CIDR lists', () => {
  it('reads a plain list (X4BNet style) without names', () => {
    expect(stored('vpn', 'vpn-x4b-ipv4.txt')).toEqual({
      text: '45.83.220.68/31\n45.83.220.70/32\n104.28.37.40/29\n185.65.134.0/24\n193.138.218.0/24\n',
      count: 5,
    })
  })

  it('reads the `cidr,provider` operator list: header skipped, quoted names unquoted, bad rows counted', () => {
    const parsed = parseFeedText(FEEDS.vpn, fixture('vpn-operators.csv'))
    expect(parsed.malformed).toBe(1)
    expect(serializeFeed(parsed).text).toBe(
      [
        '185.65.134.0/24,Mullvad VPN',
        '193.138.218.0/24,Mullvad VPN',
        '2a03:1b20:1:f410::/64,Mullvad VPN',
        '198.51.100.0/24,Example VPN, Inc.',
        '203.0.113.7/32',
        '',
      ].join('\n'),
    )
  })

  it('drops names for feeds that do not keep them', () => {
    const parsed = parseFeedText(FEEDS.proxy, '192.0.2.0/24,Some Proxy\n')
    expect(serializeFeed(parsed).text).toBe('192.0.2.0/24\n')
  })

  it('reads the FireHOL netset with its comment header', () => {
    const parsed = parseFeedText(FEEDS.proxy, fixture('firehol_proxies.netset'))
    expect(parsed.malformed).toBe(0)
    expect(parsed.entries).toHaveLength(6)
  })

  it('counts a header-like line after the first data line as malformed', () => {
    expect(parseFeedText(FEEDS.proxy, '192.0.2.1\ncidr\n').malformed).toBe(1)
  })
})

describe('provider JSON range files', () => {
  it('reads AWS ip-ranges.json, naming every range Amazon Web Services', () => {
    const parsed = parseFeedText(FEEDS.datacenter, fixture('aws-ip-ranges.json'))
    expect(parsed.malformed).toBe(1) // the /33 IPv4 prefix
    expect(serializeFeed(parsed)).toEqual({
      text: '3.208.0.0/12,Amazon Web Services\n52.95.245.0/24,Amazon Web Services\n2600:1f18::/33,Amazon Web Services\n',
      count: 3,
    })
  })

  it('reads Google cloud.json with the Google Cloud name', () => {
    const { text } = stored('datacenter', 'google-cloud.json')
    expect(text).toBe('34.1.208.0/20,Google Cloud\n2600:1900:8000::/44,Google Cloud\n')
  })

  it('reads Oracle public_ip_ranges.json', () => {
    const doc = JSON.stringify({
      last_updated_timestamp: '2024-06-10T00:00:00',
      regions: [{ region: 'us-ashburn-1', cidrs: [{ cidr: '129.213.0.0/16', tags: ['OCI'] }] }],
    })
    expect(serializeFeed(parseFeedText(FEEDS.datacenter, doc)).text).toBe('129.213.0.0/16,Oracle Cloud\n')
  })

  it('treats an unknown JSON document as malformed text', () => {
    const parsed = parseFeedText(FEEDS.datacenter, '{"hello": "world"}')
    expect(parsed.entries).toHaveLength(0)
    expect(parsed.malformed).toBe(1)
  })
})

describe('ASN lists', () => {
  it('reads AS12345 / 12345 with optional names; a # comment is never taken as a name', () => {
    const parsed = parseFeedText(FEEDS['vpn-asn'], fixture('vpn-asn.txt'))
    expect(parsed.malformed).toBe(1)
    expect(parsed.entries).toEqual([
      { asn: 9009, name: null },
      { asn: 39351, name: 'Mullvad VPN' },
      { asn: 64500, name: 'Example VPN Networks' },
    ])
    expect(serializeFeed(parsed).text).toBe('AS9009\nAS39351,Mullvad VPN\nAS64500,Example VPN Networks\n')
  })

  it('drops names for the proxy ASN list', () => {
    const parsed = parseFeedText(FEEDS['proxy-asn'], fixture('proxy-asn.txt'))
    expect(serializeFeed(parsed).text).toBe('AS64501\nAS64502\n')
  })

  it('rejects AS0 and numbers beyond 32 bits', () => {
    expect(parseFeedText(FEEDS['proxy-asn'], 'AS0\n4294967296\n').malformed).toBe(2)
  })
})

describe('helpers', () => {
  it('cleanLabel trims, unquotes and strips control characters', () => {
    expect(cleanLabel('  "A ""B"" C" ')).toBe('A "B" C')
    expect(cleanLabel('x\u0000y\tz')).toBe('x y z')
    expect(cleanLabel('   ')).toBeNull()
    expect(cleanLabel(undefined)).toBeNull()
  })

  it('mergeParsed concatenates several documents and their malformed counts', () => {
    const merged = mergeParsed([
      parseFeedText(FEEDS.datacenter, fixture('datacenter-x4b-ipv4.txt')),
      parseFeedText(FEEDS.datacenter, fixture('aws-ip-ranges.json')),
    ])
    expect(merged.entries).toHaveLength(4 + 4)
    expect(merged.malformed).toBe(1)
    expect(serializeFeed(merged).count).toBe(7)
  })

  it('resolves feed URLs from env, where an empty value disables a feed', () => {
    const { urls } = loadSettings({
      [feedUrlEnvVar('tor')]: 'http://a/x  http://b/y',
      [feedUrlEnvVar('relay')]: '',
    }).feeds
    expect(feedUrlEnvVar('vpn-asn')).toBe('VERDICT_FEED_VPN_ASN_URL')
    expect(urls.tor).toEqual(['http://a/x', 'http://b/y'])
    expect(urls.relay).toEqual([])
    expect(urls.vpn).toEqual([...FEEDS.vpn.defaultUrls])
    expect(urls['proxy-asn']).toEqual([])
  })
})
