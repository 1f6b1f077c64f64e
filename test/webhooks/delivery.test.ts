import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { RETRY_SCHEDULE_MS } from '../../src/services/webhooks/dispatcher.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { consoleSession } from '../helpers/console.js'
import { pgAvailable } from '../helpers/pg.js'
import { type Received, startReceiver } from '../helpers/webhook-receiver.js'

const hasPg = await pgAvailable()

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** Verifies with the Standard Webhooks library as a receiver would, at the time the service sent it. */
function verify(secret: string, r: Received): unknown {
  vi.setSystemTime(Number(r.headers['webhook-timestamp']) * 1000)
  try {
    return new Webhook(secret).verify(r.body, r.headers)
  } finally {
    vi.useRealTimers()
  }
}

const EMAIL = 'maria.garcia@acme-corp.com'
const IP = '73.162.10.20'
const PHONE = '+14155552671'

describe.each(['sqlite', 'postgres'] as const)('webhooks on %s', (engine: Engine) => {
  let h: Harness
  let t: TestTenant
  let rx: Receiver
  let statuses: number[] = []
  const skip = engine === 'postgres' && !hasPg

  beforeAll(async () => {
    if (skip) return
    rx = await startReceiver({ answer: () => statuses.shift() ?? 200 })
    h = await build({ engine, webhooks: { allowHttp: false, allowPrivate: true, ca: [rx.ca] } })
    h.clock.set(Date.now())
    t = await h.tenant()
  })
  afterAll(async () => {
    if (skip) return
    await h.close()
    await rx.close()
  })
  afterEach(() => {
    statuses = []
    rx?.received.splice(0)
  })

  const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })

  async function endpoint(events: string[]) {
    const res = await api('POST', '/v1/webhooks', { url: rx.url, events, description: 'test' })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { id: string; secret: string }
  }

  /** Runs the dispatcher until a round finds nothing due. */
  async function drain() {
    while ((await h.services.webhooks.runOnce()) > 0) {}
  }

  it.skipIf(skip)('creates, lists, patches and deletes endpoints; the secret is shown once', async () => {
    const ep = await endpoint(['decision.block'])
    expect(ep.id).toMatch(/^ep_[0-9a-f]{24}$/)
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const listed = (await api('GET', '/v1/webhooks')).json() as { webhooks: Record<string, unknown>[] }
    expect(listed.webhooks.map((w) => w['id'])).toContain(ep.id)
    expect(JSON.stringify(listed)).not.toContain(ep.secret)
    const patched = await api('PATCH', `/v1/webhooks/${ep.id}`, { enabled: false, events: ['label.created'] })
    expect(patched.json()).toMatchObject({ enabled: false, events: ['label.created'] })
    expect((await api('DELETE', `/v1/webhooks/${ep.id}`)).statusCode).toBe(200)
    expect((await api('GET', `/v1/webhooks/${ep.id}`)).statusCode).toBe(404)
    expect((await api('POST', '/v1/webhooks', { url: rx.url, events: ['nope'] })).statusCode).toBe(400)
  })

  it.skipIf(skip)(
    'signs a block decision so that standardwebhooks verifies it; payload has no raw identifier',
    async () => {
      const ep = await endpoint(['decision.block', 'decision.review'])
      try {
        await api('POST', '/v1/lists', { list: 'block', type: 'email', value: EMAIL })
        const scored = await api('POST', '/v1/score', {
          event: 'signup',
          user_id: 'user-1',
          email: EMAIL,
          ip: IP,
          phone: PHONE,
        })
        expect(scored.json().verdict).toBe('block')
        await drain()
        expect(rx.received).toHaveLength(1)
        const r = rx.received[0]!
        expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/)
        const payload = verify(ep.secret, r) as { type: string; data: Record<string, unknown> }
        expect(payload.type).toBe('decision.block')
        expect(payload.data).toMatchObject({
          event_id: scored.json().event_id,
          user_id: 'user-1',
          verdict: 'block',
        })
        expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, r)).toThrow()
        // The scan: neither the email, its parts, the IP nor the phone appear in what was sent or stored.
        const deliveries = await api('GET', `/v1/webhooks/${ep.id}/deliveries`)
        for (const text of [r.body, JSON.stringify(r.headers), deliveries.body])
          for (const raw of [EMAIL, 'maria.garcia', IP, '73.162.10', PHONE, '4155552671'])
            expect(text).not.toContain(raw)
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )

  it.skipIf(skip)(
    'a decision is queued exactly while an enabled endpoint subscribes to it, through every change of the endpoints',
    async () => {
      const entry = (
        await api('POST', '/v1/lists', { list: 'block', type: 'user', value: 'sub-user' })
      ).json()
      const block = async () => {
        const r = await api('POST', '/v1/score', { event: 'login', user_id: 'sub-user' })
        expect(r.json().verdict).toBe('block')
      }
      const total = async (id: string) =>
        (await api('GET', `/v1/webhooks/${id}/deliveries`)).json().total as number
      const types = () => h.store.webhookEndpoints.subscribedTypes(t.tenantId)
      // Nothing subscribes: the tenant's subscriptions are read once, then served from memory.
      await block()
      expect([...(await types())]).toEqual([])
      // An endpoint created with the subscription gets the very next decision.
      const ep = await endpoint(['decision.block'])
      try {
        await block()
        expect(await total(ep.id)).toBe(1)
        await api('PATCH', `/v1/webhooks/${ep.id}`, { events: ['decision.review'] })
        expect([...(await types())]).toEqual(['decision.review'])
        await block()
        expect(await total(ep.id)).toBe(1)
        // Subscribing again (a change of events) applies to the very next decision.
        await api('PATCH', `/v1/webhooks/${ep.id}`, { events: ['decision.review', 'decision.block'] })
        await block()
        expect(await total(ep.id)).toBe(2)
        await api('PATCH', `/v1/webhooks/${ep.id}`, { enabled: false })
        expect([...(await types())]).toEqual([])
        await block()
        await api('PATCH', `/v1/webhooks/${ep.id}`, { enabled: true })
        await block()
        expect(await total(ep.id)).toBe(3)
        const other = await endpoint(['label.created'])
        expect([...(await types())].sort()).toEqual(['decision.block', 'decision.review', 'label.created'])
        await api('DELETE', `/v1/webhooks/${other.id}`)
        expect([...(await types())].sort()).toEqual(['decision.block', 'decision.review'])
        // The dispatcher disabling an endpoint that kept failing takes it out of the subscriptions.
        await h.store.db.tx(() => h.store.webhookEndpoints.disable(ep.id, 'failing', h.clock.now()))
        expect([...(await types())]).toEqual([])
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
        await api('DELETE', `/v1/lists/${entry.id}`)
      }
    },
  )

  it.skipIf(skip)(
    'a receiver failing N times gets the same webhook-id N+1 times; the delivery ends delivered',
    async () => {
      const ep = await endpoint(['list.entry_added'])
      try {
        const N = 4
        statuses = [500, 503, 302, 404]
        const added = await api('POST', '/v1/lists', { list: 'block', type: 'user', value: 'retry-user' })
        expect(added.statusCode).toBe(200)
        await drain()
        for (let i = 1; i <= N; i++) {
          // Not before its time (the jitter only lengthens a delay) …
          h.clock.advance(RETRY_SCHEDULE_MS[i]! - 1)
          await drain()
          expect(rx.received).toHaveLength(i)
          // … and at the latest once the delay and its jitter passed.
          h.clock.advance(RETRY_SCHEDULE_MS[i]! * 0.1 + 1)
          await drain()
          expect(rx.received).toHaveLength(i + 1)
        }
        const ids = new Set(rx.received.map((r) => r.headers['webhook-id']))
        expect(ids.size).toBe(1)
        for (const r of rx.received) expect(verify(ep.secret, r)).toMatchObject({ type: 'list.entry_added' })
        const page = (await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json() as {
          deliveries: Record<string, unknown>[]
        }
        expect(page.deliveries[0]).toMatchObject({
          status: 'delivered',
          attempts: N + 1,
          last_status_code: 200,
        })
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )

  it.skipIf(skip)(
    'gives up after the schedule, disables an endpoint failing for days, and redelivers',
    async () => {
      const ep = await endpoint(['config.version_created'])
      try {
        statuses = Array(100).fill(500)
        for (let v = 0; v < 5; v++) {
          const res = await api('PUT', '/v1/config', { weights: { datacenterIp: 20 + v } })
          expect(res.statusCode).toBe(200)
          await drain()
          for (let i = 1; i < RETRY_SCHEDULE_MS.length; i++) {
            h.clock.advance(RETRY_SCHEDULE_MS[i]! * 1.2)
            await drain()
          }
          const view = (await api('GET', `/v1/webhooks/${ep.id}`)).json() as Record<string, unknown>
          if (!view['enabled']) break
        }
        const view = (await api('GET', `/v1/webhooks/${ep.id}`)).json() as Record<string, unknown>
        expect(view['enabled']).toBe(false)
        expect(String(view['disabled_reason'])).toContain('HTTP 500')
        const page = (await api('GET', `/v1/webhooks/${ep.id}/deliveries?status=failed`)).json() as {
          deliveries: { message_id: string; attempts: number; last_error: string }[]
        }
        expect(page.deliveries.length).toBeGreaterThan(0)
        expect(page.deliveries[0]).toMatchObject({
          attempts: RETRY_SCHEDULE_MS.length,
          last_error: 'HTTP 500',
        })
        const id = page.deliveries[0]!.message_id
        // Disabled: a redelivery is refused until the endpoint is enabled again.
        expect((await api('POST', `/v1/webhooks/${ep.id}/deliveries/${id}/redeliver`)).statusCode).toBe(409)
        await api('PATCH', `/v1/webhooks/${ep.id}`, { enabled: true })
        statuses = []
        rx.received.splice(0)
        expect((await api('POST', `/v1/webhooks/${ep.id}/deliveries/${id}/redeliver`)).statusCode).toBe(200)
        await drain()
        expect(rx.received.map((r) => r.headers['webhook-id'])).toContain(id)
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )

  it.skipIf(skip)(
    'signs with both secrets while a rotation overlaps, then with the new one only',
    async () => {
      const ep = await endpoint(['list.entry_removed'])
      try {
        const rotated = (
          await api('POST', `/v1/webhooks/${ep.id}/rotate-secret`, { overlap_seconds: 3600 })
        ).json() as { secret: string }
        expect(rotated.secret).not.toBe(ep.secret)
        const added = (await api('POST', '/v1/lists', { list: 'allow', type: 'user', value: 'rot' })).json()
        await api('DELETE', `/v1/lists/${added.id}`)
        await drain()
        const first = rx.received.at(-1)!
        expect(first.headers['webhook-signature']!.split(' ')).toHaveLength(2)
        expect(verify(ep.secret, first)).toBeTruthy()
        expect(verify(rotated.secret, first)).toBeTruthy()
        h.clock.advance(3600_000 + 1)
        const again = (await api('POST', '/v1/lists', { list: 'allow', type: 'user', value: 'rot2' })).json()
        await api('DELETE', `/v1/lists/${again.id}`)
        await drain()
        const later = rx.received.at(-1)!
        expect(verify(rotated.secret, later)).toBeTruthy()
        expect(() => verify(ep.secret, later)).toThrow()
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )

  it.skipIf(skip)(
    'sends review.resolved and label.created naming who labelled; erasure removes the messages',
    async () => {
      const ep = await endpoint(['review.resolved', 'label.created'])
      try {
        await api('PUT', '/v1/config', { thresholds: { review: 1 } })
        const scored = (
          await api('POST', '/v1/score', {
            event: 'login',
            user_id: 'review-user',
            email: 'xkqzvbwpjhd@example.com',
          })
        ).json()
        expect(scored.verdict).toBe('review')
        const labelled = await api('POST', '/v1/label', { label: 'legit', event_id: scored.event_id })
        expect(labelled.statusCode).toBe(200)
        await drain()
        const types = rx.received.map((r) => (verify(ep.secret, r) as { type: string }).type).sort()
        expect(types).toEqual(['label.created', 'review.resolved'])
        const resolved = rx.received
          .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
          .find((p) => p.type === 'review.resolved')!
        expect(resolved.data).toMatchObject({
          event_id: scored.event_id,
          label: 'legit',
          by: { type: 'api_key', id: t.keyId },
        })
        // An analyst in the console's review queue: named by user id, never by the email they sign in with.
        const analyst = await consoleSession(h, t)
        const queued = (
          await api('POST', '/v1/score', {
            event: 'login',
            user_id: 'review-user',
            email: 'qwzxkjvbnm@example.com',
          })
        ).json()
        expect(queued.verdict).toBe('review')
        rx.received.splice(0)
        const viaConsole = await h.app.inject({
          method: 'POST',
          url: '/v1/label',
          headers: analyst.write,
          payload: { label: 'fraud', event_id: queued.event_id },
        })
        expect(viaConsole.statusCode, viaConsole.body).toBe(200)
        await drain()
        const byAnalyst = rx.received.map(
          (r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> },
        )
        expect(byAnalyst.map((p) => p.type).sort()).toEqual(['label.created', 'review.resolved'])
        for (const p of byAnalyst) expect(p.data['by']).toEqual({ type: 'console_user', id: analyst.userId })
        for (const r of rx.received) expect(r.body).not.toContain(analyst.email)
        const before = (await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json().total as number
        expect(before).toBe(4)
        expect((await api('POST', '/v1/forget', { user_id: 'review-user' })).statusCode).toBe(200)
        expect((await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json().total).toBe(0)
      } finally {
        await api('PUT', '/v1/config', { thresholds: { review: 50 } })
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )

  it.skipIf(skip)('keeps messages 30 days', async () => {
    const ep = await endpoint(['list.entry_added'])
    try {
      await api('POST', '/v1/lists', { list: 'allow', type: 'device', value: 'dev-retained' })
      await drain()
      expect((await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json().total).toBe(1)
      h.clock.advance(29 * 86400_000)
      await h.jobs.runNow('webhook-retention')
      expect((await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json().total).toBe(1)
      h.clock.advance(1 * 86400_000 + 1)
      await h.jobs.runNow('webhook-retention')
      expect((await api('GET', `/v1/webhooks/${ep.id}/deliveries`)).json().total).toBe(0)
    } finally {
      await api('DELETE', `/v1/webhooks/${ep.id}`)
    }
  })

  it.skipIf(skip)(
    'counts delivered, failed and retrying deliveries and the oldest undelivered age',
    async () => {
      const ep = await endpoint(['list.entry_added'])
      try {
        const before = await h.services.webhooks.stats()
        expect(before.oldestUndeliveredSeconds).toBe(0)
        statuses = [500]
        await api('POST', '/v1/lists', { list: 'allow', type: 'user', value: 'counted' })
        await drain()
        h.clock.advance(3000)
        const retrying = await h.services.webhooks.stats()
        expect(retrying.retrying).toBe(before.retrying + 1)
        expect(retrying.oldestUndeliveredSeconds).toBe(3)
        h.clock.advance(RETRY_SCHEDULE_MS[1]! * 1.2)
        await drain()
        const after = await h.services.webhooks.stats()
        expect(after).toEqual({
          delivered: before.delivered + 1,
          failed: before.failed,
          retrying: before.retrying,
          oldestUndeliveredSeconds: 0,
        })
      } finally {
        await api('DELETE', `/v1/webhooks/${ep.id}`)
      }
    },
  )
})
