import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSettings } from '../../../src/config/settings.js'
import { isPublicDnsName, MxResolver } from '../../../src/intel/email/mx.js'
import { LoopbackDns } from '../../helpers/dns-server.js'

const dns = new LoopbackDns({
  'mx.example.net': {
    MX: [
      { preference: 20, exchange: 'backup.mx.example.net' },
      { preference: 10, exchange: 'Primary.MX.example.net' },
    ],
  },
  'nullmx.example.net': { MX: [{ preference: 0, exchange: '.' }], A: ['192.0.2.10'] },
  'a-only.example.net': { A: ['192.0.2.1'] },
  'aaaa-only.example.net': { AAAA: ['2001:db8::1'] },
  'bare.example.net': {},
  'slow.example.net': { silent: true },
  'broken.example.net': { rcode: 'SERVFAIL' },
  'refused.example.net': { rcode: 'REFUSED' },
  'host.mx.example.net': { A: ['127.0.0.1'], AAAA: ['::1'] },
  // Answers exist for these, so a query reaching the server would come back "valid".
  'corp.internal': { MX: [{ preference: 10, exchange: 'mail.corp.internal' }] },
  'mail.corp.internal': { A: ['10.0.0.25'] },
  'mail.localhost': { A: ['127.0.0.1'] },
  'home.arpa': { MX: [{ preference: 10, exchange: 'nas.home.arpa' }] },
})

beforeAll(() => dns.start())
afterAll(() => dns.stop())

function resolver(extra: { now?: () => number; timeoutMs?: number; maxEntries?: number } = {}): MxResolver {
  return new MxResolver({ servers: [dns.server], timeoutMs: 400, canary: 'mx.example.net', ...extra })
}

describe('MxResolver against a loopback DNS server', () => {
  it('never queries names outside the public DNS: no public ICANN suffix, a suffix alone, special-use', async () => {
    const r = resolver()
    const internal = [
      'corp.internal',
      'mail.localhost',
      'home.arpa',
      'printer.home.arpa',
      'hidden.onion',
      'fileserver.lan',
      'intranet.corp',
      'example.test',
      'co.uk',
    ]
    for (const name of internal) {
      expect(isPublicDnsName(name), name).toBe(false)
      expect(await r.check(name), name).toEqual({
        status: 'unknown',
        mx: [],
        nullMx: false,
        fallback: null,
        reason: 'not_public',
      })
      if (name !== 'co.uk') expect(await r.hostAddresses(`mail.${name}`)).toEqual([])
    }
    expect(
      dns.queries.filter((q) => internal.some((n) => q.startsWith(`${n} `) || q.includes(`.${n} `))),
    ).toEqual([])
    for (const name of ['example.com', 'mx.example.net', 'shop.example.co.uk', 'xn--80ak6aa92e.com'])
      expect(isPublicDnsName(name), name).toBe(true)
  })

  it('MX records present: valid, best preference first', async () => {
    const r = await resolver().check('mx.example.net')
    expect(r).toEqual({
      status: 'valid',
      mx: ['primary.mx.example.net', 'backup.mx.example.net'],
      nullMx: false,
      fallback: null,
      reason: 'mx',
    })
  })

  it('RFC 7505 null MX: none, even when the domain has an A record', async () => {
    const r = await resolver().check('nullmx.example.net')
    expect(r).toMatchObject({ status: 'none', nullMx: true, reason: 'null_mx', mx: [] })
  })

  it('NXDOMAIN: none', async () => {
    expect(await resolver().check('missing.example.net')).toMatchObject({
      status: 'none',
      reason: 'nxdomain',
    })
  })

  it('no MX but an A or AAAA record: valid through the address fallback', async () => {
    expect(await resolver().check('a-only.example.net')).toMatchObject({
      status: 'valid',
      fallback: 'a',
      mx: [],
    })
    expect(await resolver().check('aaaa-only.example.net')).toMatchObject({
      status: 'valid',
      fallback: 'aaaa',
    })
  })

  it('no MX and no address: none', async () => {
    expect(await resolver().check('bare.example.net')).toMatchObject({
      status: 'none',
      fallback: null,
      reason: 'no_mail_host',
    })
  })

  it('a server that never answers: unknown (timeout), never none', async () => {
    const r = await resolver({ timeoutMs: 300 }).check('slow.example.net')
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout' })
  })

  it('SERVFAIL and REFUSED: unknown', async () => {
    expect(await resolver().check('broken.example.net')).toMatchObject({
      status: 'unknown',
      reason: 'servfail',
    })
    expect((await resolver().check('refused.example.net')).status).toBe('unknown')
  })

  it('an invalid domain is none without any query', async () => {
    const before = dns.queries.length
    expect(await resolver().check('not a domain')).toMatchObject({ status: 'none', reason: 'invalid_domain' })
    expect(dns.queries.length).toBe(before)
  })

  it('caches answers, including definite negatives, until the TTL passes', async () => {
    let t = 1_000_000
    const r = resolver({ now: () => t })
    await r.check('mx.example.net')
    await r.check('missing.example.net')
    const mxQueries = dns.count('mx.example.net', 'MX')
    const nxQueries = dns.count('missing.example.net', 'MX')
    expect(await r.check('MX.Example.NET')).toMatchObject({ status: 'valid' })
    expect(await r.check('missing.example.net')).toMatchObject({ status: 'none' })
    expect(dns.count('mx.example.net', 'MX')).toBe(mxQueries)
    expect(dns.count('missing.example.net', 'MX')).toBe(nxQueries)
    t += 10 * 60_000 + 1
    await r.check('mx.example.net')
    expect(dns.count('mx.example.net', 'MX')).toBe(mxQueries + 1)
  })

  it('keeps a transient failure only briefly', async () => {
    let t = 5_000_000
    const r = resolver({ now: () => t })
    await r.check('broken.example.net')
    const n = dns.count('broken.example.net', 'MX')
    await r.check('broken.example.net')
    expect(dns.count('broken.example.net', 'MX')).toBe(n)
    t += 31_000
    await r.check('broken.example.net')
    expect(dns.count('broken.example.net', 'MX')).toBe(n + 1)
  })

  it('shares one in-flight lookup between concurrent callers', async () => {
    const r = resolver()
    const before = dns.count('a-only.example.net', 'MX')
    const results = await Promise.all([
      r.check('a-only.example.net'),
      r.check('a-only.example.net'),
      r.check('a-only.example.net'),
    ])
    expect(results.every((x) => x.status === 'valid')).toBe(true)
    expect(dns.count('a-only.example.net', 'MX')).toBe(before + 1)
  })

  it('bounds the cache', async () => {
    const r = resolver({ maxEntries: 2 })
    await r.check('mx.example.net')
    await r.check('a-only.example.net')
    await r.check('bare.example.net')
    expect(r.cacheSize).toBe(2)
    const before = dns.count('mx.example.net', 'MX')
    await r.check('mx.example.net') // evicted first, so asked again
    expect(dns.count('mx.example.net', 'MX')).toBe(before + 1)
  })

  it('resolves host addresses through the same servers', async () => {
    expect(await resolver().hostAddresses('host.mx.example.net')).toEqual(['127.0.0.1', '::1'])
    expect(await resolver().hostAddresses('127.0.0.1')).toEqual(['127.0.0.1'])
    expect(await resolver().hostAddresses('missing.example.net')).toEqual([])
  })
})

describe('VERDICT_DNS_SERVERS', () => {
  it('reads a comma-separated host:port list', () => {
    const dnsServers = (env: Record<string, string>) => loadSettings(env).email.dnsServers
    expect(dnsServers({ VERDICT_DNS_SERVERS: '127.0.0.1:5353, [::1]:53' })).toEqual([
      '127.0.0.1:5353',
      '[::1]:53',
    ])
    expect(dnsServers({ VERDICT_DNS_SERVERS: ' ' })).toBeUndefined()
    expect(dnsServers({})).toBeUndefined()
  })
})
