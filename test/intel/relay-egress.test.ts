import { writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { importFeed } from '../../src/intel/feeds/update.js'
import { parseCidr } from '../../src/intel/ip/cidr.js'
import { type IpIntel, loadIpIntel } from '../../src/intel/ip/index.js'
import { parseIp } from '../../src/intel/ip/normalize.js'
import { RELAY_EGRESS, RELAY_EGRESS_DATE, relayEgressOperator } from '../../src/intel/ip/relay-egress.js'

const operatorOf = (addr: string) => relayEgressOperator(parseIp(addr)!)

/**
 * Entries of Apple's egress list of 2026-06-29 (the first and last of each operator's part, by address):
 * the table must hold every one of them, first and last address, under the right operator.
 */
const APPLE_SAMPLE: ReadonlyArray<readonly [string, string, string]> = [
  ['104.28.28.0/26', '104.28.28.0', 'Cloudflare'],
  ['104.28.151.254/32', '104.28.151.254', 'Cloudflare'],
  ['2606:54c0::/35', '2606:54c0:1fff:ffff:ffff:ffff:ffff:ffff', 'Cloudflare'],
  ['2606:54c3:0:1a9c::/64', '2606:54c3:0:1a9c:ffff:ffff:ffff:ffff', 'Cloudflare'],
  ['2a09:bac2::/35', '2a09:bac2::', 'Cloudflare'],
  ['2a09:bac3:d570::/45', '2a09:bac3:d577:ffff:ffff:ffff:ffff:ffff', 'Cloudflare'],
  ['140.248.0.0/23', '140.248.1.255', 'Fastly'],
  ['146.75.252.0/23', '146.75.253.255', 'Fastly'],
  ['2a04:4e41:3b::/59', '2a04:4e41:3b:1f:ffff:ffff:ffff:ffff', 'Fastly'],
  ['2a04:4e41:7880::/41', '2a04:4e41:78ff:ffff:ffff:ffff:ffff:ffff', 'Fastly'],
  ['172.224.226.0/26', '172.224.226.63', 'Akamai'],
  ['172.224.232.0/27', '172.224.232.31', 'Akamai'],
  ['172.226.226.36/31', '172.226.226.37', 'Akamai'],
  ['2a02:26f7:b000:4000::/64', '2a02:26f7:b000:4000::', 'Akamai'],
  ['2a02:26f7:fc15:4000::/64', '2a02:26f7:fc15:4000:ffff:ffff:ffff:ffff', 'Akamai'],
]

describe('the built-in relay egress table', () => {
  it('is dated, and every prefix is a canonical CIDR no wider than an operator block', () => {
    expect(RELAY_EGRESS_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(RELAY_EGRESS.map((o) => o.operator).sort()).toEqual(['Akamai', 'Cloudflare', 'Fastly'])
    for (const { prefixes } of RELAY_EGRESS) {
      for (const p of prefixes) {
        const c = parseCidr(p)
        expect(typeof c === 'string' ? c : c.text, p).toBe(p)
        // Never a whole /16 of IPv4 space beyond Akamai's relay span, never wider than a /32 of IPv6.
        if (typeof c !== 'string') expect(c.len, p).toBeGreaterThanOrEqual(c.version === 4 ? 16 : 32)
      }
    }
  })

  it.each(APPLE_SAMPLE)('holds Apple entry %s (to %s) as %s', (entry, last, operator) => {
    const first = entry.split('/')[0]!
    expect(operatorOf(first)).toBe(operator)
    expect(operatorOf(last)).toBe(operator)
  })

  it('leaves Cloudflare outside the listed blocks alone: WARP, Workers, the CDN, the unlisted /24s', () => {
    for (const addr of [
      '104.28.27.255',
      '104.28.41.1',
      '104.28.73.1',
      '104.28.75.255',
      '104.28.152.0',
      '104.28.207.215',
      '104.28.227.185',
      '1.1.1.1',
      '2606:54c1::1',
      '2606:54c3:1::',
      '2a09:bac1:76c0:540::281:54',
      '2a09:bac4::1',
      '2a09:bac5:7a49:f9b::18e:1c',
      '2a06:98c0:3600::103',
    ]) {
      expect(operatorOf(addr), addr).toBeUndefined()
    }
  })

  it('stops at the edges of the Akamai and Fastly blocks', () => {
    expect(operatorOf('172.224.223.255')).toBeUndefined()
    expect(operatorOf('172.224.224.0')).toBe('Akamai')
    expect(operatorOf('172.226.226.255')).toBe('Akamai')
    expect(operatorOf('172.226.227.0')).toBeUndefined()
    expect(operatorOf('2a02:26f7:afff:ffff:ffff:ffff:ffff:ffff')).toBeUndefined()
    expect(operatorOf('2a02:26f7:ffff:ffff:ffff:ffff:ffff:ffff')).toBe('Akamai')
    expect(operatorOf('140.248.63.255')).toBe('Fastly')
    expect(operatorOf('140.248.64.0')).toBeUndefined()
    expect(operatorOf('146.75.127.255')).toBeUndefined()
    expect(operatorOf('146.75.128.0')).toBe('Fastly')
    expect(operatorOf('2a04:4e42::1')).toBeUndefined()
  })
})

describe('a fresh install with no feeds', () => {
  let intel: IpIntel
  beforeAll(async () => {
    intel = await loadIpIntel({ feedsDir: await mkdtemp(join(tmpdir(), 'verdict-relay-')), city: false })
  })

  it.each([
    ['104.28.28.1', 13335],
    ['104.28.151.254', 13335],
    ['2a09:bac2:3848::1', 13335],
    ['146.75.130.5', 54113],
    ['2a04:4e41:5e02::1', 54113],
    ['172.224.232.5', 20940],
    ['2a02:26f7:b3c0:4000::1', 20940],
  ])('classifies %s (AS%i, a hosting network) as a relay, not a datacenter', (addr, asn) => {
    expect(intel.lookup(addr)).toMatchObject({
      asn,
      isPrivacyRelay: true,
      isDatacenter: false,
      datacenterProvider: null,
      isVpn: false,
      isProxy: false,
      // Definite for this address even without the feed.
      known: { relay: true, tor: false, vpn: false, proxy: false },
    })
  })

  it.each([
    ['104.28.27.255'],
    ['104.28.152.1'],
    ['104.28.207.215'],
    ['2a09:bac1:76c0:540::281:54'],
    ['2a06:98c0:3600::103'],
    ['146.75.1.1'],
    ['172.226.227.1'],
  ])('keeps %s, outside the table, a datacenter address with relay unknown', (addr) => {
    expect(intel.lookup(addr)).toMatchObject({
      isPrivacyRelay: false,
      isDatacenter: true,
      known: { relay: false },
    })
  })

  it('lists the table as a dated source', () => {
    expect(intel.sources().find((s) => s.name === 'relay-egress')).toMatchObject({
      kind: 'curated',
      loaded: true,
      dataDate: RELAY_EGRESS_DATE,
      entries: RELAY_EGRESS.reduce((n, o) => n + o.prefixes.length, 0),
    })
  })
})

describe('a relay feed adds to the table', () => {
  let intel: IpIntel
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-relay-feed-'))
    const csv = join(dir, 'egress.csv')
    // Apple's CSV shape; 104.28.1.0/24 is outside the table, as a future list might add.
    writeFileSync(csv, '104.28.1.0/24,US,US-CA,Los Angeles,\n2606:54c1:99::/48,US,US-CA,Los Angeles,\n')
    await importFeed('relay', csv, { dir, progress: () => {} })
    intel = await loadIpIntel({ feedsDir: dir, city: false })
  })

  it('flags the feed ranges and the table, and makes relay known everywhere', () => {
    expect(intel.lookup('104.28.1.9')).toMatchObject({ isPrivacyRelay: true, isDatacenter: false })
    expect(intel.lookup('2606:54c1:99::1')).toMatchObject({ isPrivacyRelay: true, isDatacenter: false })
    expect(intel.lookup('104.28.40.1')).toMatchObject({ isPrivacyRelay: true, isDatacenter: false })
    expect(intel.lookup('104.28.207.215')).toMatchObject({
      isPrivacyRelay: false,
      isDatacenter: true,
      known: { relay: true },
    })
  })
})
