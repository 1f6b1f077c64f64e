import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

async function clientIp(
  trustProxy: boolean | number | string[] | undefined,
  remoteAddress: string,
  xff?: string,
): Promise<string> {
  await h?.close()
  h = await build(trustProxy === undefined ? {} : { trustProxy })
  const res = await h.app.inject({
    url: '/v1/ip',
    remoteAddress,
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  })
  expect(res.statusCode).toBe(200)
  return res.json().ip
}

describe('client IP behind proxies (TRUST_PROXY)', () => {
  it('true trusts exactly one hop: the entry the nearest proxy appended, never the caller-written ones', async () => {
    // nginx with $proxy_add_x_forwarded_for appends the peer it saw to whatever the caller sent.
    expect(await clientIp(true, '10.0.0.2', '6.6.6.6, 198.51.100.7')).toBe('198.51.100.7')
    expect(await clientIp(true, '10.0.0.2', '198.51.100.7')).toBe('198.51.100.7')
    expect(await clientIp(true, '10.0.0.2')).toBe('10.0.0.2')
    expect(await clientIp(1, '10.0.0.2', '6.6.6.6, 198.51.100.7')).toBe('198.51.100.7')
  })

  it('a hop count trusts that many proxies: the client is that many entries from the right', async () => {
    // client -> CDN (appends client) -> nginx (appends CDN) -> verdict
    expect(await clientIp(2, '10.0.0.2', '6.6.6.6, 198.51.100.7, 203.0.113.9')).toBe('198.51.100.7')
    expect(await clientIp(3, '10.0.0.2', '6.6.6.6, 198.51.100.7, 203.0.113.9')).toBe('6.6.6.6')
    // Fewer entries than hops: the leftmost there is.
    expect(await clientIp(3, '10.0.0.2', '198.51.100.7')).toBe('198.51.100.7')
  })

  it('a proxy list trusts the header only from those proxies, walking right while entries are proxies', async () => {
    const proxies = ['10.0.0.0/8', '2001:db8::1']
    expect(await clientIp(proxies, '10.1.2.3', '6.6.6.6, 198.51.100.7')).toBe('198.51.100.7')
    expect(await clientIp(proxies, '10.1.2.3', '6.6.6.6, 198.51.100.7, 10.9.9.9')).toBe('198.51.100.7')
    expect(await clientIp(proxies, '2001:db8::1', '198.51.100.7')).toBe('198.51.100.7')
    // A peer outside the list is the client itself, whatever it writes in the header.
    expect(await clientIp(proxies, '192.0.2.44', '6.6.6.6, 198.51.100.7')).toBe('192.0.2.44')
    expect(await clientIp(proxies, '2001:db8::2', '198.51.100.7')).toBe('2001:db8::2')
  })

  it('off by default and when false: the socket address, the header ignored', async () => {
    expect(await clientIp(undefined, '192.0.2.44', '6.6.6.6')).toBe('192.0.2.44')
    expect(await clientIp(false, '192.0.2.44', '6.6.6.6')).toBe('192.0.2.44')
  })
})
