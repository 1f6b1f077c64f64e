import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeSources } from '../../src/intel/index.js'
import { loadIpIntel } from '../../src/intel/ip/index.js'
import { RELAY_EGRESS_DATE } from '../../src/intel/ip/relay-egress.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'

// iCloud Private Relay egress on Cloudflare (IPv4, IPv6) and Fastly, in Apple's list; and a Cloudflare
// WARP egress, which is not relay.
const CLOUDFLARE_RELAY = '104.28.40.10'
const CLOUDFLARE_RELAY_V6 = '2a09:bac2:3848::1'
const FASTLY_RELAY = '146.75.130.5'
const WARP = '104.28.207.215'

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

describe('iCloud Private Relay egress with no relay feed loaded', () => {
  it('POST /v1/check/ip reports a relay, not a hosting network, and does not call relay unknown there', async () => {
    for (const ip of [CLOUDFLARE_RELAY, CLOUDFLARE_RELAY_V6, FASTLY_RELAY]) {
      const body = (await post('/v1/check/ip', { ip })).json()
      expect(body.ip, ip).toMatchObject({
        is_privacy_relay: true,
        is_datacenter: false,
        datacenter_provider: null,
        is_vpn: false,
        is_proxy: false,
        fraud_score: 0,
      })
      expect(body.warnings.join('\n'), ip).not.toMatch(/relay_feed_not_loaded/)
    }
    const warp = (await post('/v1/check/ip', { ip: WARP })).json()
    expect(warp.ip).toMatchObject({
      asn: 13335,
      is_privacy_relay: false,
      is_datacenter: true,
      datacenter_provider: 'Cloudflare',
    })
    expect(warp.ip.fraud_score).toBeGreaterThan(0)
    expect(warp.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^relay_feed_not_loaded/)]))
  })

  it('POST /v1/score fires the informational privacy_relay, never datacenter_ip, and allows', async () => {
    for (const ip of [CLOUDFLARE_RELAY, CLOUDFLARE_RELAY_V6]) {
      const res = await post('/v1/score', { event: 'signup', ip })
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json()
      const reasons = body.checks.map((c: { reason: string }) => c.reason)
      expect(reasons, ip).toContain('privacy_relay')
      expect(reasons, ip).not.toContain('datacenter_ip')
      expect(body.checks.find((c: { reason: string }) => c.reason === 'privacy_relay').weight).toBe(0)
      expect(body).toMatchObject({ score: 0, verdict: 'allow' })
    }
    // WARP is a VPN anyone can run, on a rented server too: it stays a hosting address, at review.
    const warp = (await post('/v1/score', { event: 'signup', ip: WARP })).json()
    expect(warp.checks.map((c: { reason: string }) => c.reason)).toContain('datacenter_ip')
    expect(warp).toMatchObject({ score: 45, verdict: 'review' })
  })

  it('GET /v1/health lists the table as a dated source', async () => {
    const health = (await h.app.inject({ url: '/v1/health', headers: t.headers })).json()
    expect(health.sources.find((s: { name: string }) => s.name === 'relay-egress')).toMatchObject({
      kind: 'curated',
      loaded: true,
      dataDate: RELAY_EGRESS_DATE,
    })
  })
})
