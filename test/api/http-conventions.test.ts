import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
let t: TestTenant
beforeAll(async () => {
  h = await build()
  t = await h.tenant({ monthlyQuota: 1000 })
})
afterAll(async () => {
  await h.close()
})

describe('HTTP conventions (item 10)', () => {
  it('401 carries WWW-Authenticate', async () => {
    const res = await h.app.inject({ url: '/v1/events' })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="verdict"/)
  })

  it('a known path with a wrong method answers 405 with Allow', async () => {
    const res = await h.app.inject({ method: 'PUT', url: '/v1/score', headers: t.headers })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('POST')
    expect(res.json()).toMatchObject({ code: 'method_not_allowed' })
    const list = await h.app.inject({ method: 'PATCH', url: '/v1/lists/le_123', headers: t.headers })
    expect(list.statusCode).toBe(405)
    expect(list.headers.allow).toBe('DELETE')
    expect((await h.app.inject({ url: '/v1/nothing-here' })).statusCode).toBe(404)
  })

  it('keyed responses carry Cache-Control: no-store and the month’s usage', async () => {
    await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: { event: 'login', user_id: 'u-1' },
    })
    const res = await h.app.inject({ url: '/v1/events', headers: t.headers })
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['quota-limit']).toBe('1000')
    expect(res.headers['quota-remaining']).toBe('999')
    expect(Number(res.headers['quota-reset'])).toBeGreaterThan(0)
  })

  it('compresses a large answer when asked', async () => {
    for (let i = 0; i < 30; i++)
      await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'login', user_id: `u-gz-${i}`, ip: '203.0.113.9' },
      })
    const res = await h.app.inject({
      url: '/v1/events?limit=30',
      headers: { ...t.headers, 'accept-encoding': 'gzip' },
    })
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(res.rawPayload).toString()).events).toHaveLength(30)
  })

  it('415 says what to send', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: { ...t.headers, 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(res.statusCode).toBe(415)
    expect(res.json().error).toMatch(/application\/json/)
  })

  it('a 400 never shows a regex', async () => {
    const digits = await h.app.inject({ url: '/v1/events?limit=ab', headers: t.headers })
    expect(digits.statusCode).toBe(400)
    expect(digits.json().error).toBe('query.limit must be a string of digits')
    const reason = await h.app.inject({ url: '/v1/events?reason=NO!', headers: t.headers })
    expect(reason.json().error).not.toMatch(/\^|\$|\\d|\[a-z/)
    const since = await h.app.inject({ url: '/v1/events?since_ms=x', headers: t.headers })
    expect(since.json().error).not.toMatch(/\^|\$|\\d/)
  })
})
