import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness | undefined
let lines: Record<string, unknown>[] = []
let raw = ''
afterEach(async () => {
  await h?.close().catch(() => {})
  h = undefined
})

async function setup(): Promise<TestTenant> {
  lines = []
  raw = ''
  const stream = {
    write(line: string) {
      raw += line
      lines.push(JSON.parse(line) as Record<string, unknown>)
    },
  }
  h = await build({ logger: { level: 'info', stream } })
  return h.tenant()
}

const requestLines = () => lines.filter((l) => l['msg'] === 'request' || l['msg'] === 'request failed')
const EVENT = {
  event: 'signup',
  email: 'private.person@example.com',
  ip: '198.51.100.23',
  phone: '+44 20 7946 0555',
}

describe('request logs and request ids', () => {
  it("one info line per request with the caller's X-Request-Id, route pattern, status, duration and tenant", async () => {
    const t = await setup()
    const res = await h!.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: { ...t.headers, 'x-request-id': 'shop-7f3a.retry:2' },
      payload: EVENT,
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-request-id']).toBe('shop-7f3a.retry:2')
    const [line, ...more] = requestLines()
    expect(more).toEqual([])
    expect(line).toMatchObject({
      level: 30,
      reqId: 'shop-7f3a.retry:2',
      method: 'POST',
      route: '/v1/score',
      status: 200,
      tenant: t.tenantId,
    })
    expect(typeof line!['duration_ms']).toBe('number')
    // Nothing personal and no key: not the email, the address, the phone, the key or the URL's query.
    for (const s of [EVENT.email, EVENT.ip, '7946', t.apiKey, 'private.person']) expect(raw).not.toContain(s)
  })

  it('replaces an X-Request-Id that is too long or not plain, and ids every response', async () => {
    const t = await setup()
    for (const bad of ['a'.repeat(129), 'has space', '<script>', 'ünïcode']) {
      const res = await h!.app.inject({ url: '/v1/health', headers: { 'x-request-id': bad } })
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/)
    }
    const ok = await h!.app.inject({ url: '/v1/config', headers: t.headers })
    expect(ok.statusCode).toBe(200)
    expect(ok.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/)
    const missing = await h!.app.inject({ url: '/v1/nothing-here' })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers['x-request-id']).toBe(missing.json().request_id)
  })

  it('logs 4xx at info with the route pattern (never the URL) and keyless ones without a tenant', async () => {
    await setup()
    const res = await h!.app.inject({
      url: '/v1/device/some-device-id/observations',
      headers: { 'x-api-key': 'sk_wrong' },
    })
    expect(res.statusCode).toBe(401)
    const line = requestLines().at(-1)!
    expect(line).toMatchObject({
      level: 30,
      status: 401,
      route: '/v1/device/:deviceId/observations',
      tenant: null,
    })
    expect(raw).not.toContain('some-device-id')
    expect(raw).not.toContain('sk_wrong')
  })

  it('logs the trace id of an incoming traceparent', async () => {
    await setup()
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    await h!.app.inject({ url: '/v1/health', headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
    expect(requestLines().at(-1)).toMatchObject({ trace_id: traceId })
  })

  it('logs a 5xx at error, with the stack of its error', async () => {
    const t = await setup()
    // The storage is gone under the app: the request fails on the server side.
    await h!.store.close()
    const res = await h!.app.inject({ url: '/v1/events', headers: t.headers })
    expect(res.statusCode).toBeGreaterThanOrEqual(500)
    const line = requestLines().at(-1)!
    expect(line).toMatchObject({
      level: 50,
      msg: 'request failed',
      route: '/v1/events',
      status: res.statusCode,
    })
    expect(String((line['err'] as { stack?: string } | undefined)?.stack)).toContain('Error')
  })
})
