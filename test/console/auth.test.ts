import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  hashPassword,
  SESSION_IDLE_MS,
  SESSION_MAX_MS,
  SIGN_IN_FAILURES_PER_EMAIL,
  verifyPassword,
} from '../../src/services/console/console-auth.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { CONSOLE_PASSWORD, consoleSession, signInAs } from '../helpers/console.js'

let h: Harness
let a: TestTenant

beforeAll(async () => {
  h = await build()
  a = await h.tenant()
})
afterAll(async () => {
  await h.close()
})

describe('console passwords', () => {
  it('hashes with scrypt and a fresh salt; verifies only the right password', async () => {
    const one = await hashPassword('a long enough password')
    const two = await hashPassword('a long enough password')
    expect(one).toMatch(/^scrypt\$131072\$8\$1\$/)
    expect(one).not.toBe(two)
    expect(await verifyPassword('a long enough password', one)).toBe(true)
    expect(await verifyPassword('a long enough passworD', one)).toBe(false)
  })
})

describe('console sign-in and sessions', () => {
  it('sets an httpOnly SameSite=Strict cookie (Secure only over TLS) and stores only its hash', async () => {
    const s = await consoleSession(h, a)
    const res = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      payload: { email: s.email, password: CONSOLE_PASSWORD },
    })
    const cookie = String(res.headers['set-cookie'])
    expect(cookie).toMatch(/^verdict_session=[A-Za-z0-9]{43}; /)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Path=/')
    expect(cookie).not.toContain('Secure')
    expect(res.headers['cache-control']).toBe('no-store')
    const raw = cookie.split(';')[0]!.split('=')[1]!
    const rows = await h.store.db.all<{ id_hash: string }>('SELECT id_hash FROM console_sessions')
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.some((r) => r.id_hash === raw)).toBe(false)
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.id_hash))).toBe(true)
    expect(res.json()).toMatchObject({ tenantId: a.tenantId, email: s.email })
  })

  it('marks the cookie Secure when the request came over TLS (a trusted proxy says https)', async () => {
    const tls = await build({ trustProxy: true })
    try {
      const t = await tls.tenant()
      const s = await consoleSession(tls, t)
      const res = await tls.app.inject({
        method: 'POST',
        url: '/console/api/sign-in',
        headers: { 'x-forwarded-proto': 'https' },
        payload: { email: s.email, password: CONSOLE_PASSWORD },
      })
      expect(String(res.headers['set-cookie'])).toContain('; Secure')
    } finally {
      await tls.close()
    }
  })

  it('answers 401 for a wrong password or an unknown email, with the same message', async () => {
    const s = await consoleSession(h, a)
    const wrong = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      payload: { email: s.email, password: 'not the password' },
      remoteAddress: '10.9.0.1',
    })
    const unknown = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      payload: { email: 'nobody@example.com', password: 'not the password' },
      remoteAddress: '10.9.0.2',
    })
    expect(wrong.statusCode).toBe(401)
    expect(unknown.statusCode).toBe(401)
    expect(wrong.json().error).toBe(unknown.json().error)
    expect(wrong.headers['set-cookie']).toBeUndefined()
  })

  it('throttles failed sign-ins per email (429 with Retry-After), even with the right password', async () => {
    const s = await consoleSession(h, a)
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL; i++) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/console/api/sign-in',
        payload: { email: s.email, password: `guess-${i}` },
        remoteAddress: `10.8.${i}.1`,
      })
      expect(res.statusCode).toBe(401)
    }
    const blocked = await h.app.inject({
      method: 'POST',
      url: '/console/api/sign-in',
      payload: { email: s.email, password: CONSOLE_PASSWORD },
      remoteAddress: '10.8.99.1',
    })
    expect(blocked.statusCode).toBe(429)
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0)
    h.clock.advance(10 * 60_000)
    await signInAs(h, s.email)
  })

  it('reads /v1 routes as the session tenant; state changes need the CSRF header', async () => {
    const s = await consoleSession(h, a)
    const scored = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: a.headers,
      payload: { event: 'signup', user_id: 'csrf-user' },
    })
    const events = await h.app.inject({ url: '/v1/events?q=csrf-user', headers: s.read })
    expect(events.statusCode).toBe(200)
    expect(events.json().events.map((e: { id: string }) => e.id)).toEqual([scored.json().event_id])

    const body = { list: 'block', type: 'user', value: 'csrf-victim' }
    const noToken = await h.app.inject({ method: 'POST', url: '/v1/lists', headers: s.read, payload: body })
    expect(noToken.statusCode).toBe(403)
    expect(noToken.json().code).toBe('forbidden')
    const badToken = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: { ...s.read, 'x-csrf-token': 'x'.repeat(43) },
      payload: body,
    })
    expect(badToken.statusCode).toBe(403)
    const ok = await h.app.inject({ method: 'POST', url: '/v1/lists', headers: s.write, payload: body })
    expect(ok.statusCode).toBe(200)

    // The token is the session's own: it is given back to a reloaded page, and no other session's works.
    const me = await h.app.inject({ url: '/console/api/session', headers: s.read })
    expect(me.json().csrfToken).toBe(s.csrf)
    const other = await consoleSession(h, a)
    const crossed = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: { cookie: s.cookie, 'x-csrf-token': other.csrf },
      payload: body,
    })
    expect(crossed.statusCode).toBe(403)
  })

  it('ends an idle session (401, cookie no longer works)', async () => {
    const idle = await consoleSession(h, a)
    h.clock.advance(SESSION_IDLE_MS - 1000)
    expect((await h.app.inject({ url: '/console/api/session', headers: idle.read })).statusCode).toBe(200)
    h.clock.advance(SESSION_IDLE_MS - 1000)
    expect((await h.app.inject({ url: '/console/api/session', headers: idle.read })).statusCode).toBe(200)
    h.clock.advance(SESSION_IDLE_MS)
    const gone = await h.app.inject({ url: '/v1/events', headers: idle.read })
    expect(gone.statusCode).toBe(401)
    expect(gone.json().code).toBe('unauthorized')
  })

  it('ends a session kept busy all along once it is 12 hours old (the absolute limit, not idleness)', async () => {
    const busy = await consoleSession(h, a)
    const step = SESSION_IDLE_MS / 3
    let age = 0
    // Used every 10 minutes up to one step before the limit: never idle, always accepted.
    while (age + step < SESSION_MAX_MS) {
      h.clock.advance(step)
      age += step
      const res = await h.app.inject({ url: '/console/api/session', headers: busy.read })
      expect(res.statusCode, `busy session refused at ${age / 60_000} min`).toBe(200)
    }
    expect(SESSION_MAX_MS - age).toBeLessThan(SESSION_IDLE_MS)
    // The last use was one step ago (well inside the idle window), so only the age can end it now.
    h.clock.advance(SESSION_MAX_MS - age)
    const old = await h.app.inject({ url: '/console/api/session', headers: busy.read })
    expect(old.statusCode).toBe(401)
    expect(old.json().code).toBe('unauthorized')
    expect((await h.app.inject({ url: '/v1/events', headers: busy.read })).statusCode).toBe(401)
  })

  it('deletes expired sessions in the background, and only those', async () => {
    // A harness of its own: the row count must not depend on the sessions earlier tests left.
    const own = await build()
    try {
      const t = await own.tenant()
      const rows = async () =>
        (await own.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM console_sessions'))!.n
      // Sign-in also clears expired sessions, so the old one expires after the last sign-in.
      const old = await consoleSession(own, t)
      own.clock.advance(SESSION_IDLE_MS / 2)
      const live = await consoleSession(own, t)
      own.clock.advance(SESSION_IDLE_MS / 2 + 1000)
      expect(Number(await rows())).toBe(2)
      await own.jobs.runNow('console-session-expiry')
      expect(Number(await rows())).toBe(1)
      expect((await own.app.inject({ url: '/console/api/session', headers: live.read })).statusCode).toBe(200)
      expect((await own.app.inject({ url: '/console/api/session', headers: old.read })).statusCode).toBe(401)
    } finally {
      await own.close()
    }
  })

  it('signs out on the server: the old cookie answers 401 afterwards', async () => {
    const s = await consoleSession(h, a)
    const noCsrf = await h.app.inject({ method: 'POST', url: '/console/api/sign-out', headers: s.read })
    expect(noCsrf.statusCode).toBe(403)
    const out = await h.app.inject({ method: 'POST', url: '/console/api/sign-out', headers: s.write })
    expect(out.statusCode).toBe(200)
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0')
    expect((await h.app.inject({ url: '/console/api/session', headers: s.read })).statusCode).toBe(401)
    expect((await h.app.inject({ url: '/v1/events', headers: s.read })).statusCode).toBe(401)
  })

  it('adds a console user over HTTP; a taken email answers 409', async () => {
    const s = await consoleSession(h, a)
    const body = {
      email: `new-${a.tenantId.slice(0, 6).toLowerCase()}@example.com`,
      password: 'another long password',
    }
    const made = await h.app.inject({
      method: 'POST',
      url: '/console/api/users',
      headers: s.write,
      payload: body,
    })
    expect(made.statusCode).toBe(200)
    expect(made.json()).toMatchObject({ tenantId: a.tenantId, email: body.email })
    const again = await h.app.inject({
      method: 'POST',
      url: '/console/api/users',
      headers: s.write,
      payload: { ...body, email: body.email.toUpperCase() },
    })
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('conflict')
    const short = await h.app.inject({
      method: 'POST',
      url: '/console/api/users',
      headers: s.write,
      payload: { email: 'short@example.com', password: 'short' },
    })
    expect(short.statusCode).toBe(400)
    const list = await h.app.inject({ url: '/console/api/users', headers: s.read })
    expect(list.json().users.map((u: { email: string }) => u.email)).toContain(body.email)
  })

  it('shows an event in full: checks, explanation, labels, device timeline', async () => {
    const s = await consoleSession(h, a)
    const scored = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: a.headers,
      payload: { event: 'login', user_id: 'detail-user', device_id: 'fp-detail', ip: '73.162.10.20' },
    })
    const id = scored.json().event_id as string
    const label = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: s.write,
      payload: { label: 'legit', event_id: id, note: 'checked by phone' },
    })
    expect(label.statusCode).toBe(200)
    const res = await h.app.inject({ url: `/console/api/events/${id}`, headers: s.read })
    expect(res.statusCode).toBe(200)
    const d = res.json()
    expect(d.event.id).toBe(id)
    expect(d.explanation).toMatch(/risk score/)
    expect(d.labels).toEqual([expect.objectContaining({ label: 'legit', note: 'checked by phone' })])
    expect(d.device.timeline[0].eventId).toBe(id)
    expect(d.device.profile).toMatchObject({ observations: 1, accounts: 1, distinctIps: 1, browser: null })
    const overview = await h.app.inject({ url: '/console/api/overview', headers: s.read })
    expect(overview.statusCode).toBe(200)
    expect(overview.json().hourly).toHaveLength(24)
    expect(overview.json().quota.limit).toBeGreaterThan(0)
  })
})
