import type { LookupAddress } from 'node:dns'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** A loopback stand-in for DNS: names map to answers; `rebind.test` answers public once, then loopback. */
function resolver() {
  let rebindCalls = 0
  const answers: Record<string, string[]> = {
    localhost: ['127.0.0.1', '::1'],
    'public.test': ['93.184.216.34'],
    'private.test': ['10.1.2.3'],
    'mixed.test': ['93.184.216.34', '192.168.1.1'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:127.0.0.1'],
  }
  return async (host: string): Promise<LookupAddress[]> => {
    if (host === 'rebind.test')
      return [{ address: rebindCalls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]
    const a = answers[host]
    if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
}

describe('webhook targets', () => {
  let h: Harness
  let t: TestTenant
  let rx: Receiver
  beforeAll(async () => {
    rx = await startReceiver()
    h = await build({ webhooks: { allowHttp: false, allowPrivate: false, ca: [rx.ca], resolve: resolver() } })
    t = await h.tenant()
  })
  afterAll(async () => {
    await h.close()
    await rx.close()
  })

  const create = (url: string) =>
    h.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: t.headers,
      payload: { url, events: ['label.created'] },
    })

  it.each([
    ['http without VERDICT_WEBHOOK_ALLOW_HTTP', 'http://public.test/hook', 'must be https'],
    ['loopback literal', 'https://127.0.0.1/hook', 'special-purpose'],
    ['IPv6 loopback literal', 'https://[::1]/hook', 'special-purpose'],
    ['IPv4-mapped literal', 'https://[::ffff:10.0.0.1]/hook', 'special-purpose'],
    ['link-local metadata literal', 'https://169.254.169.254/latest', 'special-purpose'],
    ['documentation range literal', 'https://198.51.100.7/hook', 'special-purpose'],
    ['localhost', `https://localhost:${1}/hook`, 'special-purpose'],
    ['a name resolving to a private address', 'https://private.test/hook', 'special-purpose'],
    ['a name with one private address among public ones', 'https://mixed.test/hook', 'special-purpose'],
    ['a name resolving to link-local', 'https://metadata.test/hook', 'special-purpose'],
    ['a name resolving to an IPv4-mapped loopback', 'https://mapped.test/hook', 'special-purpose'],
    ['a name that does not resolve', 'https://nowhere.test/hook', 'does not resolve'],
    ['credentials in the URL', 'https://user:pw@public.test/hook', 'credentials'],
  ])('refuses %s at creation', async (_what, url, message) => {
    const res = await create(url)
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json().error).toContain(message)
  })

  it('accepts a name resolving to public addresses', async () => {
    expect((await create('https://public.test/hook')).statusCode).toBe(200)
  })

  it('refuses at connect time a name that resolves to loopback since creation (DNS rebinding)', async () => {
    const res = await create(`https://rebind.test:${rx.port}/hook`)
    expect(res.statusCode, res.body).toBe(200)
    const ep = res.json() as { id: string }
    const label = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: t.headers,
      payload: { label: 'fraud', entities: { device_id: 'd-1' } },
    })
    expect(label.statusCode).toBe(200)
    while ((await h.services.webhooks.runOnce()) > 0) {}
    expect(rx.counts.connections).toBe(0)
    expect(rx.received).toHaveLength(0)
    const page = await h.app.inject({
      method: 'GET',
      url: `/v1/webhooks/${ep.id}/deliveries`,
      headers: t.headers,
    })
    expect(page.json().deliveries[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: null,
      last_error: expect.stringContaining('special-purpose'),
    })
  })
})

describe('webhook targets with private addresses and http allowed', () => {
  it('accepts loopback and http, and gives up on a receiver slower than the timeout', async () => {
    const slow = await startReceiver({ delayMs: 2000 })
    const h = await build({
      webhooks: { allowHttp: true, allowPrivate: true, ca: [slow.ca], timeoutMs: 300 },
    })
    try {
      const t = await h.tenant()
      const http = await h.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: t.headers,
        payload: { url: 'http://127.0.0.1:9/hook', events: ['label.created'] },
      })
      expect(http.statusCode, http.body).toBe(200)
      await h.app.inject({ method: 'DELETE', url: `/v1/webhooks/${http.json().id}`, headers: t.headers })
      const ep = await h.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: t.headers,
        payload: { url: slow.url, events: ['label.created'] },
      })
      expect(ep.statusCode).toBe(200)
      await h.app.inject({
        method: 'POST',
        url: '/v1/label',
        headers: t.headers,
        payload: { label: 'fraud', entities: { device_id: 'd-2' } },
      })
      await h.services.webhooks.runOnce()
      expect(slow.received).toHaveLength(1)
      const page = await h.app.inject({
        method: 'GET',
        url: `/v1/webhooks/${ep.json().id}/deliveries`,
        headers: t.headers,
      })
      expect(page.json().deliveries[0]).toMatchObject({
        status: 'pending',
        last_error: 'no answer within 0 s',
      })
    } finally {
      await h.close()
      await slow.close()
    }
  })
})
