import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dnsServersFromEnv, MxResolver } from '../../../src/intel/email/mx.js'
import { LoopbackDns } from '../../helpers/dns-server.js'

const dns = new LoopbackDns({
  'mx.test': {
    MX: [
      { preference: 20, exchange: 'backup.mx.test' },
      { preference: 10, exchange: 'Primary.MX.test' },
    ],
  },
  'nullmx.test': { MX: [{ preference: 0, exchange: '.' }], A: ['192.0.2.10'] },
  'a-only.test': { A: ['192.0.2.1'] },
  'aaaa-only.test': { AAAA: ['2001:db8::1'] },
  'bare.test': {},
  'slow.test': { silent: true },
  'broken.test': { rcode: 'SERVFAIL' },
  'refused.test': { rcode: 'REFUSED' },
  'host.mx.test': { A: ['127.0.0.1'], AAAA: ['::1'] },
})

beforeAll(() => dns.start())
afterAll(() => dns.stop())

function resolver(extra: { now?: () => number; timeoutMs?: number; maxEntries?: number } = {}): MxResolver {
  return new MxResolver({ servers: [dns.server], timeoutMs: 400, ...extra })
}

describe('MxResolver against a loopback DNS server', () => {
  it('MX records present: valid, best preference first', async () => {
    const r = await resolver().check('mx.test')
    expect(r).toEqual({
      status: 'valid',
      mx: ['primary.mx.test', 'backup.mx.test'],
      nullMx: false,
      fallback: null,
      reason: 'mx',
    })
  })

  it('RFC 7505 null MX: none, even when the domain has an A record', async () => {
    const r = await resolver().check('nullmx.test')
    expect(r).toMatchObject({ status: 'none', nullMx: true, reason: 'null_mx', mx: [] })
  })

  it('NXDOMAIN: none', async () => {
    expect(await resolver().check('missing.test')).toMatchObject({ status: 'none', reason: 'nxdomain' })
  })

  it('no MX but an A or AAAA record: valid through the address fallback', async () => {
    expect(await resolver().check('a-only.test')).toMatchObject({ status: 'valid', fallback: 'a', mx: [] })
    expect(await resolver().check('aaaa-only.test')).toMatchObject({ status: 'valid', fallback: 'aaaa' })
  })

  it('no MX and no address: none', async () => {
    expect(await resolver().check('bare.test')).toMatchObject({
      status: 'none',
      fallback: null,
      reason: 'no_mail_host',
    })
  })

  it('a server that never answers: unknown (timeout), never none', async () => {
    const r = await resolver({ timeoutMs: 300 }).check('slow.test')
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout' })
  })

  it('SERVFAIL and REFUSED: unknown', async () => {
    expect(await resolver().check('broken.test')).toMatchObject({ status: 'unknown', reason: 'servfail' })
    expect((await resolver().check('refused.test')).status).toBe('unknown')
  })

  it('an invalid domain is none without any query', async () => {
    const before = dns.queries.length
    expect(await resolver().check('not a domain')).toMatchObject({ status: 'none', reason: 'invalid_domain' })
    expect(dns.queries.length).toBe(before)
  })

  it('caches answers, including definite negatives, until the TTL passes', async () => {
    let t = 1_000_000
    const r = resolver({ now: () => t })
    await r.check('mx.test')
    await r.check('missing.test')
    const mxQueries = dns.count('mx.test', 'MX')
    const nxQueries = dns.count('missing.test', 'MX')
    expect(await r.check('MX.test')).toMatchObject({ status: 'valid' })
    expect(await r.check('missing.test')).toMatchObject({ status: 'none' })
    expect(dns.count('mx.test', 'MX')).toBe(mxQueries)
    expect(dns.count('missing.test', 'MX')).toBe(nxQueries)
    t += 10 * 60_000 + 1
    await r.check('mx.test')
    expect(dns.count('mx.test', 'MX')).toBe(mxQueries + 1)
  })

  it('keeps a transient failure only briefly', async () => {
    let t = 5_000_000
    const r = resolver({ now: () => t })
    await r.check('broken.test')
    const n = dns.count('broken.test', 'MX')
    await r.check('broken.test')
    expect(dns.count('broken.test', 'MX')).toBe(n)
    t += 31_000
    await r.check('broken.test')
    expect(dns.count('broken.test', 'MX')).toBe(n + 1)
  })

  it('shares one in-flight lookup between concurrent callers', async () => {
    const r = resolver()
    const before = dns.count('a-only.test', 'MX')
    const results = await Promise.all([
      r.check('a-only.test'),
      r.check('a-only.test'),
      r.check('a-only.test'),
    ])
    expect(results.every((x) => x.status === 'valid')).toBe(true)
    expect(dns.count('a-only.test', 'MX')).toBe(before + 1)
  })

  it('bounds the cache', async () => {
    const r = resolver({ maxEntries: 2 })
    await r.check('mx.test')
    await r.check('a-only.test')
    await r.check('bare.test')
    expect(r.cacheSize).toBe(2)
    const before = dns.count('mx.test', 'MX')
    await r.check('mx.test') // evicted first, so asked again
    expect(dns.count('mx.test', 'MX')).toBe(before + 1)
  })

  it('resolves host addresses through the same servers', async () => {
    expect(await resolver().hostAddresses('host.mx.test')).toEqual(['127.0.0.1', '::1'])
    expect(await resolver().hostAddresses('127.0.0.1')).toEqual(['127.0.0.1'])
    expect(await resolver().hostAddresses('missing.test')).toEqual([])
  })
})

describe('dnsServersFromEnv', () => {
  it('reads a comma-separated host:port list', () => {
    expect(dnsServersFromEnv({ VERDICT_DNS_SERVERS: '127.0.0.1:5353, [::1]:53' })).toEqual([
      '127.0.0.1:5353',
      '[::1]:53',
    ])
    expect(dnsServersFromEnv({ VERDICT_DNS_SERVERS: ' ' })).toBeUndefined()
    expect(dnsServersFromEnv({})).toBeUndefined()
  })
})
