import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueKey, revokeKey, rotateKey } from '../../src/services/access/tenants.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { type ConsoleSession, consoleSession } from '../helpers/console.js'

/**
 * The common security test. Every keyed route the app registers (collected through onRoute into
 * app.routeTable) must have a case here, so a route added later without one fails the first test.
 */
interface SecurityCase {
  /** A request body that would be accepted with the right key. */
  payload?: unknown
  /** The concrete URL when the route has path parameters. */
  url?: string
  /**
   * Creates something as tenant A and returns the request tenant B makes to reach it; B must get 404
   * (or, for routes without resource ids, see nothing of A's: checked by `invisible`).
   */
  foreign?: (h: Harness, a: TestTenant) => Promise<{ url?: string; payload?: unknown }>
}

const NO_HOOK = `ep_${'0'.repeat(24)}`

/** A webhook endpoint of tenant A (an address literal: no DNS needed); returns its URL path. */
async function aHook(h: Harness, a: TestTenant): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: a.headers,
    payload: { url: 'https://93.184.216.34/hook', events: ['label.created'] },
  })
  return `/v1/webhooks/${res.json().id}`
}

const CASES: Record<string, SecurityCase> = {
  'GET /v1/config': {},
  'PUT /v1/config': { payload: { weights: { datacenterIp: 50 } } },
  'GET /v1/config/versions': {},
  'POST /v1/config/simulate': { payload: { weights: { datacenterIp: 50 } } },
  'POST /v1/replay': {
    payload: { event_id: '00000000-0000-7000-8000-000000000000' },
    foreign: async (h, a) => {
      const ev = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'signup' },
      })
      return { payload: { event_id: ev.json().event_id } }
    },
  },
  'GET /v1/lists': {},
  'POST /v1/lists': { payload: { list: 'block', type: 'user', value: 'u-1' } },
  'POST /v1/batch/lists': { payload: { rows: [{ list: 'block', type: 'user', value: 'u-1' }] } },
  'POST /v1/check/email': { payload: { email: 'someone@example.com' } },
  'POST /v1/check/ip': { payload: { ip: '8.8.8.8' } },
  'POST /v1/check/phone': { payload: { phone: '+442079460000' } },
  'POST /v1/batch/check/email': { payload: { rows: [{ email: 'someone@example.com' }] } },
  'POST /v1/batch/check/ip': { payload: { rows: [{ ip: '8.8.8.8' }] } },
  'POST /v1/batch/check/phone': { payload: { rows: [{ phone: '+442079460000' }] } },
  'GET /v1/lookups': {},
  'POST /v1/score': { payload: { event: 'signup' } },
  'POST /v1/batch/score': { payload: { rows: [{ event: 'signup' }] } },
  'GET /v1/events': {},
  'GET /v1/events/:id': {
    url: '/v1/events/00000000-0000-4000-8000-000000000000',
    foreign: async (h, a) => {
      const ev = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'signup', user_id: 'sec-event-owner' },
      })
      return { url: `/v1/events/${(ev.json() as { event_id: string }).event_id}` }
    },
  },
  'GET /v1/usage': {},
  'GET /v1/labels': {},
  'DELETE /v1/labels/:id': {
    url: '/v1/labels/999999',
    foreign: async (h, a) => {
      const ev = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'signup', user_id: 'sec-label-owner' },
      })
      const l = await h.app.inject({
        method: 'POST',
        url: '/v1/label',
        headers: a.headers,
        payload: { label: 'fraud', event_id: (ev.json() as { event_id: string }).event_id },
      })
      return { url: `/v1/labels/${(l.json() as { label_id: string }).label_id}` }
    },
  },
  'GET /v1/stats': {},
  'GET /v1/rules/performance': {},
  'POST /v1/label': {
    payload: { label: 'fraud', entities: { ip: '192.0.2.1' } },
    foreign: async (h, a) => {
      const ev = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'signup' },
      })
      return { payload: { label: 'fraud', event_id: ev.json().event_id } }
    },
  },
  'POST /v1/subject': { payload: { user_id: 'someone' } },
  'POST /v1/forget': { payload: { user_id: 'someone' } },
  'GET /v1/suppressions': {},
  'GET /v1/device/:deviceId/observations': { url: '/v1/device/fp-1/observations' },
  'DELETE /v1/lists/:id': {
    url: '/v1/lists/1',
    foreign: async (h, a) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/lists',
        headers: a.headers,
        payload: { list: 'block', type: 'user', value: 'victim' },
      })
      return { url: `/v1/lists/${res.json().id}` }
    },
  },
  'POST /v1/webhooks': { payload: { url: 'https://93.184.216.34/hook', events: ['label.created'] } },
  'GET /v1/webhooks': {},
  'GET /v1/webhooks/:webhookId': {
    url: `/v1/webhooks/${NO_HOOK}`,
    foreign: async (h, a) => ({ url: await aHook(h, a) }),
  },
  'PATCH /v1/webhooks/:webhookId': {
    url: `/v1/webhooks/${NO_HOOK}`,
    payload: { enabled: false },
    foreign: async (h, a) => ({ url: await aHook(h, a) }),
  },
  'DELETE /v1/webhooks/:webhookId': {
    url: `/v1/webhooks/${NO_HOOK}`,
    foreign: async (h, a) => ({ url: await aHook(h, a) }),
  },
  'POST /v1/webhooks/:webhookId/rotate-secret': {
    url: `/v1/webhooks/${NO_HOOK}/rotate-secret`,
    payload: {},
    foreign: async (h, a) => ({ url: `${await aHook(h, a)}/rotate-secret` }),
  },
  'GET /v1/webhooks/:webhookId/deliveries': {
    url: `/v1/webhooks/${NO_HOOK}/deliveries`,
    foreign: async (h, a) => ({ url: `${await aHook(h, a)}/deliveries` }),
  },
  'POST /v1/webhooks/:webhookId/deliveries/:messageId/redeliver': {
    url: `/v1/webhooks/${NO_HOOK}/deliveries/msg_${'0'.repeat(32)}/redeliver`,
    foreign: async (h, a) => {
      const hook = await aHook(h, a)
      await h.app.inject({
        method: 'POST',
        url: '/v1/label',
        headers: a.headers,
        payload: { label: 'fraud', entities: { device_id: 'hook-victim' } },
      })
      const page = await h.app.inject({ url: `${hook}/deliveries`, headers: a.headers })
      return { url: `${hook}/deliveries/${page.json().deliveries[0].message_id}/redeliver` }
    },
  },
}

/** Routes callable without a key: they must never answer 401. */
const KEYLESS = new Set([
  'GET /v1/health',
  'GET /v1/ip',
  'GET /v1/openapi.json',
  'GET /v1/beacon.js',
  'GET /v1/beacon.mjs',
])
/**
 * The console's own routes (auth 'console': a session cookie, never a key). Their `foreign` requests
 * are made with tenant B's session and must answer 404.
 */
const CONSOLE_CASES: Record<string, SecurityCase> = {
  'GET /console/api/session': {},
  'POST /console/api/sign-out': {},
  'GET /console/api/overview': {},
  'GET /console/api/keys': {},
  'GET /console/api/review': {},
  'GET /console/api/defaults': {},
  'POST /console/api/keys': { payload: {} },
  'GET /console/api/users': {},
  'POST /console/api/users': { payload: { email: 'x@example.com', password: 'long enough password' } },
  'GET /console/api/events/:id': {
    url: '/console/api/events/ev_1',
    foreign: async (h, a) => {
      const ev = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'x' },
      })
      return { url: `/console/api/events/${ev.json().event_id}` }
    },
  },
  'POST /console/api/keys/:keyId/rotate': {
    url: '/console/api/keys/key_1/rotate',
    foreign: async (h, a) => ({
      url: `/console/api/keys/${(await issueKey(h.store, h.clock, a.tenantId)).keyId}/rotate`,
    }),
  },
  'POST /console/api/keys/:keyId/revoke': {
    url: '/console/api/keys/key_1/revoke',
    foreign: async (h, a) => ({
      url: `/console/api/keys/${(await issueKey(h.store, h.clock, a.tenantId)).keyId}/revoke`,
    }),
  },
}
/** Console routes without a session: signing in. */
const CONSOLE_OPEN = new Set(['POST /console/api/sign-in'])
/** The browser beacon takes publishable keys only; its own matrix is in test/api/beacon.test.ts. */
const BEACON = new Set(['POST /v1/beacon', 'OPTIONS /v1/beacon'])

let h: Harness
let a: TestTenant
let b: TestTenant

beforeAll(async () => {
  h = await build()
  a = await h.tenant()
  b = await h.tenant()
})
afterAll(async () => {
  await h.close()
})

const keyedRoutes = () => h.app.routeTable.filter((r) => r.auth === 'key').map((r) => `${r.method} ${r.url}`)
const consoleRoutes = () =>
  h.app.routeTable.filter((r) => r.auth === 'console').map((r) => `${r.method} ${r.url}`)

describe('security matrix', () => {
  it('covers every keyed route, and only keyless routes skip the key', () => {
    const keyed = keyedRoutes()
    expect(keyed.length).toBeGreaterThan(0)
    expect(keyed.filter((r) => !(r in CASES))).toEqual([])
    const open = h.app.routeTable
      .filter((r) => r.auth !== 'key' && r.auth !== 'console')
      .map((r) => `${r.method} ${r.url}`)
    expect(
      open.filter(
        (r) => !KEYLESS.has(r) && !BEACON.has(r) && !CONSOLE_OPEN.has(r) && !r.startsWith('POST /v1/check'),
      ),
    ).toEqual([])
    const consoleOnly = consoleRoutes()
    expect(consoleOnly.length).toBeGreaterThan(0)
    expect(consoleOnly.filter((r) => !(r in CONSOLE_CASES))).toEqual([])
  })

  const request = (
    route: string,
    headers: Record<string, string>,
    c: SecurityCase,
    remoteAddress?: string,
  ) => {
    const [method, path] = route.split(' ') as [string, string]
    return h.app.inject({
      method: method as 'GET',
      url: c.url ?? path,
      headers,
      ...(remoteAddress ? { remoteAddress } : {}),
      ...(c.payload !== undefined ? { payload: c.payload as object } : {}),
    })
  }

  it('answers 401 {error} without a key, with a wrong key, a revoked key and a rotated key', async () => {
    const revoked = await h.tenant()
    await revokeKey(h.store, h.clock, revoked.keyId)
    const rotated = await h.tenant()
    const fresh = await rotateKey(h.store, h.clock, rotated.keyId)
    const variants: [string, Record<string, string>][] = [
      ['no key', {}],
      ['wrong key', { 'x-api-key': 'vk_wrongwrongwrongwrongwrongwrongwrongwrong' }],
      ['wrong bearer', { authorization: 'Bearer vk_nope' }],
      ['revoked key', revoked.headers],
      ['rotated key', rotated.headers],
    ]
    // One client address per route: failed attempts are throttled per address (see limits.test.ts).
    for (const [i, route] of keyedRoutes().entries()) {
      const from = `10.77.${i}.1`
      for (const [label, headers] of variants) {
        const res = await request(route, headers, CASES[route]!, from)
        expect(res.statusCode, `${route} with ${label}`).toBe(401)
        expect(Object.keys(res.json()), `${route} with ${label}`).toEqual(['error', 'code', 'request_id'])
        expect(res.json().code, `${route} with ${label}`).toBe('unauthorized')
      }
      // The key that replaced the rotated one works.
      const ok = await request(route, { authorization: `Bearer ${fresh.apiKey}` }, CASES[route]!, from)
      expect(ok.statusCode, `${route} with the new key`).not.toBe(401)
    }
  })

  it("answers 404 when one tenant reaches for another tenant's resource", async () => {
    for (const route of keyedRoutes()) {
      const c = CASES[route]!
      if (!c.foreign) continue
      const target = await c.foreign(h, a)
      const res = await request(route, b.headers, { ...c, ...target })
      expect(res.statusCode, route).toBe(404)
      expect(res.json().error).toBeTypeOf('string')
    }
  })

  it("shows one tenant nothing of another tenant's device observations", async () => {
    const scored = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: a.headers,
      payload: { event: 'login', device_id: 'fp-victim', ip: '73.162.10.20' },
    })
    const resolved = scored.json().device.resolved_id as string
    for (const id of ['fp-victim', resolved]) {
      const own = await h.app.inject({ url: `/v1/device/${id}/observations`, headers: a.headers })
      expect(own.json().observations).toHaveLength(1)
      const res = await h.app.inject({ url: `/v1/device/${id}/observations`, headers: b.headers })
      expect(res.statusCode).toBe(200)
      expect(res.json().observations).toEqual([])
    }
  })

  it('never answers 401 on keyless routes, even with a wrong key', async () => {
    for (const route of KEYLESS) {
      const [method, url] = route.split(' ') as [string, string]
      const res = await h.app.inject({ method: method as 'GET', url, headers: { 'x-api-key': 'wrong' } })
      expect(res.statusCode, route).toBe(200)
    }
  })

  it("lets tenant B read, label, delete or erase nothing of tenant A's", async () => {
    const A_USER = 'isolation-user-aaaa'
    const A_DEVICE = 'isolation-device-aaaa'
    const ev = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: a.headers,
      payload: {
        event: 'isolation-event',
        user_id: A_USER,
        device_id: A_DEVICE,
        email: 'iso.a@example.com',
        ip: '73.162.10.20',
      },
    })
    const eventId: string = ev.json().event_id
    await h.app.inject({
      method: 'POST',
      url: '/v1/check/email',
      headers: a.headers,
      payload: { email: 'iso.a@example.com' },
    })
    await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: a.headers,
      payload: { weights: { datacenterIp: 77 } },
    })
    await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: a.headers,
      payload: { list: 'block', type: 'user', value: A_USER },
    })
    await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: a.headers,
      payload: { label: 'legit', event_id: eventId },
    })
    const emailHash = h.hasher.entity('email', 'iso.a@example.com')
    const markers = [A_USER, A_DEVICE, eventId, emailHash, 'isolation-event', '"datacenterIp":77']
    // GET of one resource by id (GET /v1/events/:id, a webhook's own routes) is the 404 test above; these are the listings.
    for (const r of keyedRoutes().filter(
      (x) => x.startsWith('GET ') && !x.endsWith('/:id') && !x.includes('/v1/webhooks/:webhookId'),
    )) {
      const c = CASES[r]!
      const url = (c.url ?? r.slice(4)).replace(':deviceId', A_DEVICE)
      const res = await h.app.inject({ url, headers: b.headers })
      expect(res.statusCode, r).toBe(200)
      for (const m of markers) expect(res.body.includes(m), `${r} leaks ${m}`).toBe(false)
    }
    const subject = await h.app.inject({
      method: 'POST',
      url: '/v1/subject',
      headers: b.headers,
      payload: { user_id: A_USER },
    })
    for (const m of markers) expect(subject.body.includes(m), `subject leaks ${m}`).toBe(false)
    const simulated = await h.app.inject({
      method: 'POST',
      url: '/v1/config/simulate',
      headers: b.headers,
      payload: { thresholds: { review: 0, block: 0 } },
    })
    expect(simulated.statusCode).toBe(200)
    expect(simulated.json().events + simulated.json().skipped).toBe(0)
    const forget = await h.app.inject({
      method: 'POST',
      url: '/v1/forget',
      headers: b.headers,
      payload: { user_id: A_USER, email: 'iso.a@example.com' },
    })
    expect(Object.values(forget.json().deleted).every((n) => n === 0)).toBe(true)
    const stillThere = await h.app.inject({
      method: 'POST',
      url: '/v1/subject',
      headers: a.headers,
      payload: { user_id: A_USER },
    })
    expect(stillThere.json().counts.events).toBe(1)
  })
})

describe('security matrix: console sessions', () => {
  let sa: ConsoleSession
  let sb: ConsoleSession
  beforeAll(async () => {
    sa = await consoleSession(h, a)
    sb = await consoleSession(h, b)
  })

  const send = (route: string, headers: Record<string, string>, c: SecurityCase, from: string) => {
    const [method, path] = route.split(' ') as [string, string]
    return h.app.inject({
      method: method as 'GET',
      url: c.url ?? path,
      headers,
      remoteAddress: from,
      ...(c.payload !== undefined ? { payload: c.payload as object } : {}),
    })
  }

  it('answers 401 on every console route without a session, with an unknown one or a signed-out one', async () => {
    const out = await consoleSession(h, a)
    await h.app.inject({ method: 'POST', url: '/console/api/sign-out', headers: out.write })
    const variants: [string, Record<string, string>][] = [
      ['no session', {}],
      ['unknown session', { cookie: `verdict_session=${'a'.repeat(43)}`, 'x-csrf-token': 'x' }],
      ['signed-out session', out.write],
      ['an API key instead', a.headers],
    ]
    for (const [i, route] of consoleRoutes().entries()) {
      for (const [label, headers] of variants) {
        const res = await send(route, headers, CONSOLE_CASES[route]!, `10.78.${i}.1`)
        expect(res.statusCode, `${route} with ${label}`).toBe(401)
        expect(res.json().code, `${route} with ${label}`).toBe('unauthorized')
      }
    }
  })

  it('answers 401 on every keyed /v1 route with an unknown or signed-out session and no key', async () => {
    const out = await consoleSession(h, a)
    await h.app.inject({ method: 'POST', url: '/console/api/sign-out', headers: out.write })
    for (const [i, route] of keyedRoutes().entries()) {
      for (const headers of [out.write, { cookie: `verdict_session=${'b'.repeat(43)}` }]) {
        const res = await send(route, headers, CASES[route]!, `10.79.${i}.1`)
        expect(res.statusCode, route).toBe(401)
      }
      const ok = await send(route, sa.write, CASES[route]!, `10.79.${i}.1`)
      expect(ok.statusCode, `${route} with a live session`).not.toBe(401)
    }
  })

  it("answers 404 when one tenant's session reaches for another tenant's resource", async () => {
    for (const [route, c] of [
      ...Object.entries(CONSOLE_CASES),
      ...keyedRoutes().map((r) => [r, CASES[r]!] as const),
    ]) {
      if (!c.foreign) continue
      const target = await c.foreign(h, a)
      const res = await send(route, sb.write, { ...c, ...target }, '10.80.0.1')
      expect(res.statusCode, route).toBe(404)
      const own = await send(route, sa.write, { ...c, ...target }, '10.80.0.2')
      expect(own.statusCode, `${route} for its own tenant`).not.toBe(404)
    }
  })
})
