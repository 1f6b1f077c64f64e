import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createConsoleUser } from '../../src/services/console/console-auth.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { CONSOLE_PASSWORD, type ConsoleSession, consoleSession } from '../helpers/console.js'

/**
 * Issue 26, item 13: the console's JSON API and the /docs page carry the hardening headers
 * docs/console.md promises; a response carrying a new secret is never stored by a cache; over TLS the
 * session cookie is `__Host-` prefixed (no subdomain can set or shadow it).
 */
let h: Harness
let t: TestTenant
let s: ConsoleSession

beforeAll(async () => {
  h = await build({ trustProxy: true })
  t = await h.tenant()
  s = await consoleSession(h, t)
})
afterAll(async () => {
  await h.close()
})

const HARDENING = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

describe('console and docs headers', () => {
  it('every /console/api answer carries nosniff, no framing and no referrer, errors included', async () => {
    const answers = await Promise.all([
      h.app.inject({ url: '/console/api/session', headers: s.read }),
      h.app.inject({ url: '/console/api/session' }),
      h.app.inject({ method: 'POST', url: '/console/api/sign-in', payload: { email: 'x@example.com' } }),
      h.app.inject({ url: '/console/api/keys', headers: s.read }),
    ])
    for (const res of answers) {
      expect(res.headers, `${res.statusCode} ${res.body}`).toMatchObject(HARDENING)
      expect(res.headers['cache-control']).toBe('no-store')
    }
  })

  it('/docs carries them too', async () => {
    for (const url of ['/docs', '/docs/']) {
      const res = await h.app.inject({ url })
      expect(res.statusCode).toBeLessThan(400)
      expect(res.headers, url).toMatchObject(HARDENING)
    }
  })

  it('a new or rotated key is answered with Cache-Control: no-store', async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/console/api/keys',
      headers: s.write,
      payload: {},
    })
    expect(created.statusCode, created.body).toBe(200)
    expect(created.headers['cache-control']).toBe('no-store')
    const rotated = await h.app.inject({
      method: 'POST',
      url: `/console/api/keys/${created.json().keyId}/rotate`,
      headers: s.write,
    })
    expect(rotated.statusCode, rotated.body).toBe(200)
    expect(rotated.headers['cache-control']).toBe('no-store')
  })

  it('over TLS the session cookie is __Host- prefixed, and only that name is a session', async () => {
    const email = `tls-${Date.now()}@example.com`
    await createConsoleUser(
      h.store,
      h.clock,
      { tenantId: t.tenantId, email, password: CONSOLE_PASSWORD },
      h.services.passwordCost,
    )
    const https = { 'x-forwarded-proto': 'https' }
    const res = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      headers: https,
      payload: { email, password: CONSOLE_PASSWORD },
    })
    expect(res.statusCode, res.body).toBe(200)
    const set = String(res.headers['set-cookie'])
    expect(set).toMatch(/^__Host-verdict_session=[^;]+; /)
    expect(set).toContain('Secure')
    expect(set).toContain('Path=/')
    expect(set).not.toContain('Domain')
    const value = set.split(';')[0]!.split('=')[1]!
    const ok = await h.app.inject({
      url: '/console/api/session',
      headers: { ...https, cookie: `__Host-verdict_session=${value}` },
    })
    expect(ok.statusCode, ok.body).toBe(200)
    // The unprefixed name could have been planted by a sibling host: over TLS it is not a session.
    const planted = await h.app.inject({
      url: '/console/api/session',
      headers: { ...https, cookie: `verdict_session=${value}` },
    })
    expect(planted.statusCode).toBe(401)
    // Plain HTTP (development) keeps the plain name.
    expect(
      String(
        (await h.app.inject({ method: 'POST', url: '/console/api/sign-out', headers: s.write })).headers[
          'set-cookie'
        ],
      ),
    ).toMatch(/^verdict_session=;/)
  })
})
