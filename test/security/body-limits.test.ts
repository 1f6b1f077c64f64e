import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_BODY_LIMIT, CHECK_BODY_LIMIT, SIGN_IN_BODY_LIMIT } from '../../src/plugins/json-body.js'
import { build, type Harness } from '../helpers/build.js'

/**
 * Issue 26, item 1: the routes anyone can call without a credential take small bodies, and a keyless
 * route past its per-address limit answers 429 before its body is read at all.
 */
let h: Harness

beforeAll(async () => {
  h = await build({ keylessRateLimit: 5 })
})
afterAll(async () => {
  await h.close()
})

/** A JSON object of about `bytes` bytes: one long string field. */
const padded = (fields: Record<string, unknown>, bytes: number) => {
  const base = JSON.stringify({ ...fields, pad: '' })
  return JSON.stringify({ ...fields, pad: 'x'.repeat(Math.max(0, bytes - base.length)) })
}

describe('small body limits on keyless routes', () => {
  it('are the documented figures', () => {
    expect(SIGN_IN_BODY_LIMIT).toBe(4096)
    expect(BEACON_BODY_LIMIT).toBe(8192)
    expect(CHECK_BODY_LIMIT).toBe(4096)
  })

  it('console sign-in refuses a body past its limit with 413', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.1' },
      remoteAddress: '203.0.113.1',
      payload: padded({ email: 'a@example.com', password: 'p' }, SIGN_IN_BODY_LIMIT + 1),
    })
    expect(res.statusCode, res.body).toBe(413)
    expect(res.json().code).toBe('payload_too_large')
  })

  it('the beacon refuses a body past its limit with 413 (text/plain and JSON)', async () => {
    for (const type of ['text/plain', 'application/json']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/beacon',
        remoteAddress: '203.0.113.2',
        headers: { 'content-type': type, origin: 'https://shop.example' },
        payload: padded({ key: 'pk_x' }, BEACON_BODY_LIMIT + 1),
      })
      expect(res.statusCode, res.body).toBe(413)
    }
  })

  it('/v1/check refuses a body past its limit with 413', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/check',
      remoteAddress: '203.0.113.3',
      headers: { 'content-type': 'application/json' },
      payload: padded({ email: 'a@example.com' }, CHECK_BODY_LIMIT + 1),
    })
    expect(res.statusCode, res.body).toBe(413)
  })

  it('a keyless route past its per-address limit answers 429 without reading the body', async () => {
    const remoteAddress = '203.0.113.4'
    for (let i = 0; i < 5; i++) {
      const ok = await h.app.inject({
        method: 'POST',
        url: '/v1/check',
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: '{"email":"a@example.com"}',
      })
      expect(ok.statusCode, ok.body).toBe(200)
    }
    // Not JSON at all: a 400 would mean the body was read before the limit applied.
    for (const url of ['/v1/check', '/console/api/sign-in', '/v1/beacon']) {
      const res = await h.app.inject({
        method: 'POST',
        url,
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: '{"a":',
      })
      expect(res.statusCode, `${url}: ${res.body}`).toBe(429)
    }
  })
})
