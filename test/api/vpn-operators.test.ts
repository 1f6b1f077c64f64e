import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeSources } from '../../src/intel/index.js'
import { asnPackageDir } from '../../src/intel/ip/asn.js'
import { loadIpIntel } from '../../src/intel/ip/index.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'

/** An address of `asn` taken from the bundled ASN data: the second address of its first IPv4 range. */
function addressOf(asn: number): string {
  const text = readFileSync(join(asnPackageDir(), 'asn-ipv4.csv'), 'utf8')
  const m = new RegExp(`^(\\d+)\\.(\\d+)\\.(\\d+)\\.(\\d+),[^,]+,${asn},`, 'm').exec(text)
  if (!m) throw new Error(`AS${asn} not in the bundled data`)
  return `${m[1]}.${m[2]}.${m[3]}.${Number(m[4]) + 1}`
}

let h: Harness
let t: TestTenant
// A fresh install: the real packaged data, and no feed downloaded or imported.
beforeEach(async () => {
  const base = (await testIntel()).intel
  const bare = await loadIpIntel({ feedsDir: mkdtempSync(join(tmpdir(), 'verdict-nofeeds-')), city: false })
  h = await build({
    intel: { ...base, ip: bare, sources: () => describeSources(base.email, bare, base.phone) },
  })
  t = await h.tenant()
})
afterEach(async () => {
  await h.close()
})

const post = (url: string, payload: object) =>
  h.app.inject({ method: 'POST', url, headers: t.headers, payload })

describe('VPN operators own networks, with no feeds loaded', () => {
  it('POST /v1/check/ip names the operator and does not call VPN unknown for that address', async () => {
    const mullvad = (await post('/v1/check/ip', { ip: addressOf(216025) })).json()
    expect(mullvad.ip).toMatchObject({ asn: 216025, is_vpn: true, vpn_provider: 'Mullvad VPN' })
    expect(mullvad.warnings).toHaveLength(3)
    expect(mullvad.warnings.join('\n')).not.toMatch(/vpn_feed_not_loaded/)
    const proton = (await post('/v1/check/ip', { ip: addressOf(209103) })).json()
    expect(proton.ip).toMatchObject({ asn: 209103, is_vpn: true, vpn_provider: 'Proton VPN' })
    // Anywhere else VPN stays unknown until a feed is loaded.
    const home = (await post('/v1/check/ip', { ip: '73.162.10.20' })).json()
    expect(home.ip).toMatchObject({ is_vpn: false, vpn_provider: null })
    expect(home.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^vpn_feed_not_loaded/)]))
    // A hosting company that rents servers to VPN operators is hosting, not VPN.
    const m247 = (await post('/v1/check/ip', { ip: addressOf(9009) })).json()
    expect(m247.ip).toMatchObject({ asn: 9009, is_datacenter: true, is_vpn: false })
  })

  it('POST /v1/score fires vpn_ip with the operator as evidence', async () => {
    const res = await post('/v1/score', { event: 'signup', ip: addressOf(39351) })
    expect(res.statusCode, res.body).toBe(200)
    const vpn = res.json().checks.find((c: { reason: string }) => c.reason === 'vpn_ip')
    expect(vpn).toMatchObject({ weight: 30, evidence: { asn: 39351, provider: 'Mullvad VPN' } })
    expect(vpn.message).toContain('Mullvad VPN')
    const home = await post('/v1/score', { event: 'signup', ip: '73.162.10.20' })
    expect(home.json().checks.map((c: { reason: string }) => c.reason)).not.toContain('vpn_ip')
  })

  it('GET /v1/health lists the table as a source', async () => {
    const health = (await h.app.inject({ url: '/v1/health', headers: t.headers })).json()
    expect(health.sources.find((s: { name: string }) => s.name === 'vpn-operators')).toMatchObject({
      kind: 'curated',
      loaded: true,
    })
  })
})
