import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'

let h: Harness
afterEach(async () => {
  await h.close()
})

describe('service routes', () => {
  it('GET /v1/health answers without a key with its status only; with a key, version, database and sources', async () => {
    h = await build({ version: '9.9.9' })
    const keyless = await h.app.inject({ url: '/v1/health' })
    expect(keyless.statusCode).toBe(200)
    expect(keyless.json()).toEqual({ status: 'ok' })
    const t = await h.tenant()
    const res = await h.app.inject({ url: '/v1/health', headers: t.headers })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      status: 'ok',
      version: '9.9.9',
      database: { engine: 'sqlite', reachable: true },
    })
    const sources: { name: string; loaded: boolean; attribution: string | null }[] = res.json().sources
    expect(sources.find((s) => s.name === 'geo-city')?.attribution).toContain('DB-IP')
    expect(sources.find((s) => s.name === 'tor')?.loaded).toBe(true)
    expect(sources.find((s) => s.name === 'datacenter')?.loaded).toBe(false)
    expect(sources.find((s) => s.name === 'disposable-email (merged)')?.loaded).toBe(true)
    // Missing feeds are named in the checks (they leave signals unknown), and the status stays ok.
    const feeds = res.json().checks.feeds
    expect(feeds.status).toBe('missing')
    expect(feeds.missing).toContain('datacenter')
    expect(feeds.missing).not.toContain('tor')
    expect(feeds.fix).toContain('verdict feeds update')
    // Limited per client IP like every keyless route (issue 11), so it carries the limit headers; the
    // app's default is VERDICT_KEYLESS_RATE_LIMIT's (60), the one the server runs with.
    expect(res.headers['ratelimit-limit']).toBe('60')
    expect((await h.app.inject({ url: '/v1/health?x=1' })).statusCode).toBe(400)
  })

  it('GET /v1/ip shows the socket address, or X-Forwarded-For only when TRUST_PROXY is on', async () => {
    h = await build()
    const plain = await h.app.inject({
      url: '/v1/ip',
      remoteAddress: '::ffff:192.0.2.7',
      headers: { 'x-forwarded-for': '203.0.113.5' },
    })
    expect(plain.json()).toEqual({ ip: '192.0.2.7', version: 4 })
    await h.close()
    h = await build({ trustProxy: true })
    const proxied = await h.app.inject({
      url: '/v1/ip',
      remoteAddress: '10.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.5' },
    })
    expect(proxied.json()).toEqual({ ip: '203.0.113.5', version: 4 })
  })

  it('serves OpenAPI 3.0.3 for the /v1 surface only, with the key scheme lifted on keyless routes', async () => {
    h = await build()
    const res = await h.app.inject({ url: '/v1/openapi.json' })
    expect(res.statusCode).toBe(200)
    const doc = res.json()
    expect(doc.openapi).toBe('3.0.3')
    expect(doc.info.version).toBe('1.0.0')
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' })
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.security).toEqual([{ apiKey: [] }, { bearer: [] }])
    const paths = Object.keys(doc.paths)
    expect(paths.every((p) => p.startsWith('/v1/'))).toBe(true)
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/config',
        '/v1/lists',
        '/v1/lists/{id}',
        '/v1/batch/lists',
        '/v1/health',
        '/v1/ip',
      ]),
    )
    expect(doc.paths['/v1/health'].get.security).toEqual([])
    expect(doc.paths['/v1/config'].put.security).toBeUndefined()
    expect(doc.paths['/v1/config'].put.requestBody).toBeDefined()
    const docs = await h.app.inject({ url: '/docs/' })
    expect(docs.statusCode).toBe(200)
    expect(docs.headers['content-type']).toContain('text/html')
  })

  it('answers unknown routes, bad JSON, wrong content types and oversized bodies with {error}', async () => {
    h = await build({ bodyLimitBytes: 2048 })
    const t = await h.tenant()
    const missing = await h.app.inject({ url: '/v1/nope', headers: t.headers })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toContain('/v1/nope')
    const badJson = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: { ...t.headers, 'content-type': 'application/json' },
      payload: '{"weights":',
    })
    expect(badJson.statusCode).toBe(400)
    expect(Object.keys(badJson.json())).toEqual(['error', 'code', 'request_id'])
    expect(badJson.json().code).toBe('bad_request')
    const text = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: { ...t.headers, 'content-type': 'text/plain' },
      payload: 'hi',
    })
    expect(text.statusCode).toBe(415)
    expect(text.json().error).toBeTypeOf('string')
    const big = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: t.headers,
      payload: { list: 'block', type: 'user', value: 'x'.repeat(4000) },
    })
    expect(big.statusCode).toBe(413)
    expect(big.json()).toEqual({
      error: 'request body is too large',
      code: 'payload_too_large',
      request_id: expect.any(String),
    })
    const noBody = await h.app.inject({ method: 'PUT', url: '/v1/config', headers: t.headers })
    expect(noBody.statusCode).toBe(400)
  })

  it('masks unexpected server errors as 500 with a request id, never the internal message', async () => {
    h = await build()
    const t = await h.tenant()
    await h.store.db.exec('DROP TABLE tenant_config')
    const res = await h.app.inject({ url: '/v1/config', headers: t.headers })
    expect(res.statusCode).toBe(500)
    expect(res.json().error).toMatch(/^internal error \(request id .+\)$/)
    expect(res.body).not.toContain('tenant_config')
  })
})
