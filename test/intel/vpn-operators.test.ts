import { readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { importFeed } from '../../src/intel/feeds/update.js'
import { asnPackageDir } from '../../src/intel/ip/asn.js'
import { type IpIntel, loadIpIntel } from '../../src/intel/ip/index.js'
import { VPN_OPERATOR_NETWORKS, vpnOperatorOf } from '../../src/intel/ip/vpn-operators.js'

interface Row {
  start: string
  end: string
  asn: number
  org: string
}

/** Every row of the bundled ASN data (`start,end,asn,org`, org possibly quoted). */
function rows(file: string): Row[] {
  const out: Row[] = []
  for (const line of readFileSync(join(asnPackageDir(), file), 'utf8').split('\n')) {
    const m = /^([^,]+),([^,]+),(\d+),(.*)$/.exec(line.trimEnd())
    if (!m) continue
    let org = m[4]!
    if (org.startsWith('"')) org = org.slice(1, -1).replaceAll('""', '"')
    out.push({ start: m[1]!, end: m[2]!, asn: Number(m[3]), org })
  }
  return out
}

const V4 = rows('asn-ipv4.csv')
const V6 = rows('asn-ipv6.csv')
const byAsn = (asn: number, table: Row[]) => table.filter((r) => r.asn === asn)

/** An ordinary host address inside a row: the second address of the range. */
function hostIn(r: Row): string {
  if (r.start.includes(':')) return r.start.endsWith('::') ? `${r.start}1` : r.start
  const parts = r.start.split('.').map(Number)
  if (r.start !== r.end) parts[3]! += 1
  return parts.join('.')
}

describe('the built-in VPN operator table against the bundled ASN data', () => {
  it('has one entry per AS number, each with a named operator and at least one source', () => {
    const asns = VPN_OPERATOR_NETWORKS.map((n) => n.asn)
    expect(new Set(asns).size).toBe(asns.length)
    for (const n of VPN_OPERATOR_NETWORKS) {
      expect(n.operator.length).toBeGreaterThan(0)
      expect(n.sources.length).toBeGreaterThan(0)
    }
  })

  it.each(VPN_OPERATOR_NETWORKS.map((n) => [n.asn, n.org, n.operator] as const))(
    'AS%i is held by %s (%s) in every row of the data',
    (asn, org) => {
      const all = [...byAsn(asn, V4), ...byAsn(asn, V6)]
      expect(all.length).toBeGreaterThan(0)
      // A data update that hands the number to another holder fails here: re-check the entry.
      expect([...new Set(all.map((r) => r.org))]).toEqual([org])
    },
  )

  it('applies an entry only while the holder is the one it was checked against', () => {
    const [first] = VPN_OPERATOR_NETWORKS
    expect(vpnOperatorOf(first!.asn, first!.org)).toBe(first!.operator)
    expect(vpnOperatorOf(first!.asn, 'Someone Else Ltd')).toBeUndefined()
    expect(vpnOperatorOf(first!.asn, null)).toBeUndefined()
    expect(vpnOperatorOf(null, first!.org)).toBeUndefined()
  })

  it('lists no hosting company that rents servers to VPN operators', () => {
    for (const hoster of [9009, 60068, 212238, 60781, 16265, 28753]) {
      expect(VPN_OPERATOR_NETWORKS.some((n) => n.asn === hoster)).toBe(false)
    }
  })
})

describe('a fresh install with no feeds', () => {
  let intel: IpIntel
  beforeAll(async () => {
    intel = await loadIpIntel({ feedsDir: await mkdtemp(join(tmpdir(), 'verdict-vpnops-')), city: false })
  })

  it('has no feed loaded', () => {
    expect(intel.sources().filter((s) => s.kind === 'feed' && s.loaded)).toEqual([])
    expect(intel.sources().find((s) => s.name === 'vpn-operators')).toMatchObject({
      kind: 'curated',
      loaded: true,
      entries: VPN_OPERATOR_NETWORKS.length,
    })
  })

  it.each(VPN_OPERATOR_NETWORKS.map((n) => [n.asn, n.operator, n.org] as const))(
    'flags addresses of AS%i as %s, IPv4 and IPv6',
    (asn, operator, org) => {
      const samples = [byAsn(asn, V4)[0], byAsn(asn, V4).at(-1), byAsn(asn, V6)[0]].filter(
        (r): r is Row => r !== undefined,
      )
      expect(samples.length).toBeGreaterThan(0)
      for (const r of samples) {
        const addr = hostIn(r)
        expect(intel.lookup(addr), addr).toMatchObject({
          asn,
          org,
          isVpn: true,
          vpnProvider: operator,
          // Definite for this address even without the feed.
          known: { vpn: true, tor: false, proxy: false, relay: false },
        })
      }
    },
  )

  it('does not flag hosting companies, and leaves VPN unknown for unlisted addresses', () => {
    for (const hoster of [9009, 212238, 60781]) {
      const r = byAsn(hoster, V4)[0]!
      expect(intel.lookup(hostIn(r)), `AS${hoster}`).toMatchObject({
        asn: hoster,
        isDatacenter: true,
        isVpn: false,
        vpnProvider: null,
        known: { vpn: false },
      })
    }
    expect(intel.lookup('73.162.10.20')).toMatchObject({ isVpn: false, known: { vpn: false } })
  })
})

describe('feeds add to the built-in table', () => {
  let intel: IpIntel
  const proton = byAsn(209103, V4)[0]!
  const ivpn = byAsn(203619, V4)[0]!
  const mullvad = byAsn(39351, V4)[0]!
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verdict-vpnops-feeds-'))
    const list = join(dir, 'vpn-list.csv')
    writeFileSync(
      list,
      [
        'cidr,provider',
        '198.51.100.0/24,Example VPN',
        // A named range inside a table network: the feed's name wins.
        `${proton.start}/32,Proton VPN Secure Core`,
        // An unnamed range inside a table network: the table names it.
        `${mullvad.start}/32`,
        '',
      ].join('\n'),
    )
    await importFeed('vpn', list, { dir, progress: () => {} })
    intel = await loadIpIntel({ feedsDir: dir, city: false })
  })

  it('flags feed ranges, table networks and both together', () => {
    expect(intel.lookup('198.51.100.9')).toMatchObject({ isVpn: true, vpnProvider: 'Example VPN' })
    expect(intel.lookup(hostIn(ivpn))).toMatchObject({ isVpn: true, vpnProvider: 'IVPN' })
    expect(intel.lookup(proton.start)).toMatchObject({ isVpn: true, vpnProvider: 'Proton VPN Secure Core' })
    expect(intel.lookup(hostIn(proton))).toMatchObject({ isVpn: true, vpnProvider: 'Proton VPN' })
    expect(intel.lookup(mullvad.start)).toMatchObject({ isVpn: true, vpnProvider: 'Mullvad VPN' })
    // The feed is loaded, so VPN is known everywhere now.
    expect(intel.lookup('73.162.10.20')).toMatchObject({ isVpn: false, known: { vpn: true } })
  })
})
