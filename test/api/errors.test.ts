import type { LightMyRequestResponse } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ERROR_STATUS, type ErrorCode } from '../../src/errors.js'
import { build, type Harness } from '../helpers/build.js'

let h: Harness
afterEach(async () => {
  await h?.close()
})

const REQUEST_ID = /^req_[0-9a-f]{16}$/

/** The one error shape: message, closed code with its status, and the request id in body and header. */
function expectError(res: LightMyRequestResponse, code: ErrorCode, message: string | RegExp) {
  expect(res.statusCode, res.body).toBe(ERROR_STATUS[code])
  const body = res.json()
  expect(Object.keys(body)).toEqual(['error', 'code', 'request_id'])
  expect(body.code).toBe(code)
  if (typeof message === 'string') expect(body.error).toBe(message)
  else expect(body.error).toMatch(message)
  expect(body.request_id).toMatch(REQUEST_ID)
  expect(res.headers['x-request-id']).toBe(body.request_id)
  return body as { error: string; code: ErrorCode; request_id: string }
}

describe('error bodies carry the closed code and the request id', () => {
  it('400: schema validation, checks in code, bad JSON, a badly encoded URL, an overlong path parameter', async () => {
    h = await build()
    const t = await h.tenant({ rateLimit: 1000 })
    const post = (url: string, payload: unknown) =>
      h.app.inject({ method: 'POST', url, headers: t.headers, payload: payload as object })
    expectError(await post('/v1/score', {}), 'bad_request', 'body.event is required')
    expectError(
      await post('/v1/score', { event: 'x', nope: 1 }),
      'bad_request',
      /nope is not an allowed field/,
    )
    expectError(
      await h.app.inject({ url: '/v1/events?limit=0', headers: t.headers }),
      'bad_request',
      'query.limit must be at least 1',
    )
    expectError(
      await post('/v1/label', { label: 'fraud' }),
      'bad_request',
      'send event_id, user_id, entities or a combination',
    )
    expectError(
      await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: { ...t.headers, 'content-type': 'application/json' },
        payload: '{"event":',
      }),
      'bad_request',
      /not valid JSON/,
    )
    // Raised by the router before any route is chosen: answered like every other error.
    expectError(
      await h.app.inject({ url: '/v1/%zz', headers: t.headers }),
      'bad_request',
      'the URL is not validly encoded',
    )
    expectError(
      await h.app.inject({ url: `/v1/device/${'x'.repeat(1100)}/observations`, headers: t.headers }),
      'bad_request',
      'a path parameter is longer than 1024 characters',
    )
  })

  it('401 without a key, with a wrong key', async () => {
    h = await build()
    expectError(await h.app.inject({ url: '/v1/config' }), 'unauthorized', /^missing API key/)
    expectError(
      await h.app.inject({ url: '/v1/config', headers: { 'x-api-key': 'vk_wrong' } }),
      'unauthorized',
      'invalid, revoked or rotated API key',
    )
  })

  it('404 for an unknown route, a missing resource and an abuse trap, the trap answering like any unknown path', async () => {
    h = await build()
    const t = await h.tenant()
    expectError(
      await h.app.inject({ url: '/v1/nope?x=1', headers: t.headers }),
      'not_found',
      'no route for GET /v1/nope',
    )
    expectError(
      await h.app.inject({ method: 'DELETE', url: '/v1/lists/999', headers: t.headers }),
      'not_found',
      /999/,
    )
    expectError(
      await h.app.inject({
        method: 'POST',
        url: '/v1/label',
        headers: t.headers,
        payload: { label: 'fraud', event_id: 'e-1' },
      }),
      'not_found',
      'event e-1 not found',
    )
    const unknown = await h.app.inject({ url: '/wp-login.phq', remoteAddress: '203.0.113.80' })
    const trap = await h.app.inject({ url: '/wp-login.php', remoteAddress: '203.0.113.80' })
    expectError(unknown, 'not_found', 'no route for GET /wp-login.phq')
    expectError(trap, 'not_found', 'no route for GET /wp-login.php')
    const { date: _d1, ...unknownHeaders } = unknown.headers
    const { date: _d2, ...trapHeaders } = trap.headers
    expect(Object.keys(trapHeaders).sort()).toEqual(Object.keys(unknownHeaders).sort())
    expect(trapHeaders['content-type']).toBe(unknownHeaders['content-type'])
  })

  it('413 for an oversized body, 415 for a body that is not JSON', async () => {
    h = await build({ bodyLimitBytes: 2048 })
    const t = await h.tenant()
    expectError(
      await h.app.inject({
        method: 'POST',
        url: '/v1/lists',
        headers: t.headers,
        payload: { list: 'block', type: 'user', value: 'x'.repeat(4000) },
      }),
      'payload_too_large',
      'request body is too large',
    )
    expectError(
      await h.app.inject({
        method: 'PUT',
        url: '/v1/config',
        headers: { ...t.headers, 'content-type': 'text/plain' },
        payload: 'hi',
      }),
      'unsupported_media_type',
      'unsupported content type "text/plain": send a JSON body with Content-Type: application/json',
    )
  })

  it('429: over the per-key rate, over the monthly quota, too many failed key attempts', async () => {
    h = await build()
    const limited = await h.tenant({ rateLimit: 1 })
    expect((await h.app.inject({ url: '/v1/config', headers: limited.headers })).statusCode).toBe(200)
    const rate = expectError(
      await h.app.inject({ url: '/v1/config', headers: limited.headers }),
      'rate_limited',
      /rate limit of 1 requests per minute/,
    )
    expect(rate.request_id).toMatch(REQUEST_ID)

    const small = await h.tenant({ monthlyQuota: 1 })
    const score = () =>
      h.app.inject({ method: 'POST', url: '/v1/score', headers: small.headers, payload: { event: 'signup' } })
    expect((await score()).statusCode).toBe(200)
    const over = await score()
    expectError(over, 'quota_exceeded', /monthly quota of 1 metered units/)
    expect(over.headers['retry-after']).toMatch(/^\d+$/)

    let last: LightMyRequestResponse | undefined
    for (let i = 0; i < 31; i++) {
      last = await h.app.inject({ url: '/v1/config', remoteAddress: '198.51.100.9' })
    }
    expectError(last!, 'rate_limited', /too many failed API-key attempts/)
  })

  it('500 masks the cause and names the request id it was logged under', async () => {
    h = await build()
    const t = await h.tenant()
    await h.store.db.exec('DROP TABLE tenant_config')
    const body = expectError(
      await h.app.inject({ url: '/v1/config', headers: t.headers }),
      'internal',
      /^internal error \(request id req_[0-9a-f]{16}\)$/,
    )
    expect(body.error).toContain(body.request_id)
    expect(JSON.stringify(body)).not.toContain('tenant_config')
  })

  it('gives every request its own id, and success answers carry theirs too (logged, issue 31)', async () => {
    h = await build()
    const ids = new Set<string>()
    for (let i = 0; i < 50; i++) {
      const res = await h.app.inject({ url: `/v1/nope-${i}` })
      ids.add(res.json().request_id)
    }
    expect(ids.size).toBe(50)
    const ok = await h.app.inject({ url: '/v1/health' })
    expect(ok.statusCode).toBe(200)
    expect(ok.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/)
  })
})
