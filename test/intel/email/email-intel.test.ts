import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSettings } from '../../../src/config/settings.js'
import { EmailIntel, type EmailIntelligence } from '../../../src/intel/email/index.js'
import { LoopbackDns } from '../../helpers/dns-server.js'

const dns = new LoopbackDns({
  'example.example.net': { MX: [{ preference: 5, exchange: 'mx.example.example.net' }] },
})
beforeAll(() => dns.start())
afterAll(() => dns.stop())

describe('EmailIntel facade', () => {
  const intel: EmailIntelligence = new EmailIntel()

  it('analyses a plus-tagged gmail alias', () => {
    expect(intel.analyze('J.Smith+promo@googlemail.com')).toEqual({
      malformed: false,
      rejectReason: null,
      local: 'J.Smith+promo',
      domain: 'googlemail.com',
      canonical: 'jsmith@gmail.com',
      isAliased: true,
      aliasTricks: ['plus_tag', 'dot_trick', 'domain_alias'],
      hasPlusTag: true,
      isDisposable: false,
      relay: null,
      isFreeProvider: true,
      looksGibberish: false,
      gibberishScore: expect.any(Number),
    })
  })

  it('recognises e-mail relay aliases as relays, neither disposable nor gibberish', () => {
    for (const [address, service] of [
      ['quartz_falcon_42@duck.com', 'DuckDuckGo Email Protection'],
      ['k3x9qzv7tw@mozmail.com', 'Firefox Relay'],
      ['emma.river417@simplelogin.com', 'SimpleLogin'],
      ['xq7vz2kd9p@privaterelay.appleid.com', 'Sign in with Apple'],
      ['shop.x7k2@someone.anonaddy.com', 'addy.io'],
    ] as const) {
      const a = intel.analyze(address)
      expect(a, address).toMatchObject({ relay: service, isDisposable: false, looksGibberish: false })
    }
    expect(intel.analyze('xkqzvbwpj@mailinator.com').relay).toBeNull()
  })

  it('flags a disposable, machine-made address', () => {
    const a = intel.analyze('xkqzvbwpj@mailinator.com')
    expect(a).toMatchObject({
      malformed: false,
      isDisposable: true,
      isFreeProvider: false,
      looksGibberish: true,
    })
    expect(a.gibberishScore).toBeGreaterThan(0.5)
  })

  it('reports a malformed address with its reason and keeps domain facts', () => {
    const a = intel.analyze(`${'a'.repeat(70)}@yopmail.com`)
    expect(a).toMatchObject({
      malformed: true,
      rejectReason: 'local_too_long',
      canonical: null,
      domain: 'yopmail.com',
      isDisposable: true,
      hasPlusTag: false,
    })
    expect(intel.analyze('nobody')).toMatchObject({
      malformed: true,
      rejectReason: 'missing_at',
      domain: null,
    })
  })

  it('takes VERDICT_DNS_SERVERS and VERDICT_SMTP_PROBE from the settings, as the server passes them', async () => {
    const { email } = loadSettings({ VERDICT_DNS_SERVERS: dns.server, VERDICT_SMTP_PROBE: '1' })
    const configured = new EmailIntel({
      mx: { ...(email.dnsServers ? { servers: email.dnsServers } : {}) },
      catchAll: { enabled: email.smtpProbe },
    })
    expect(await configured.mx('example.example.net')).toMatchObject({
      status: 'valid',
      mx: ['mx.example.example.net'],
    })
    const s = configured.sources()
    expect(s.mx.servers).toEqual([dns.server])
    expect(s.catchAllProbe.enabled).toBe(true)
  })

  it('leaves the catch-all probe off by default', async () => {
    expect(intel.sources().catchAllProbe.enabled).toBe(false)
    expect(await intel.catchAll('example.example.net')).toMatchObject({
      catchAll: false,
      probed: false,
      status: 'not_probed',
    })
  })

  it('describes its data sources for the health endpoint', () => {
    const s = intel.sources()
    expect(s.disposable.count).toBeGreaterThanOrEqual(160_000)
    expect(s.disposable.sources).toHaveLength(3)
    expect(s.freeProviders.count).toBeGreaterThan(100)
    expect(s.gibberishModel.trainedOn.length).toBe(2)
    expect(s.mx).toMatchObject({ servers: null, timeoutMs: 1500, ttlMs: 600_000 })
  })
})
