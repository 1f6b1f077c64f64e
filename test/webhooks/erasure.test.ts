import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

const hasPg = await pgAvailable()

/**
 * Erasure reaches the outbox: a list entry's message names its phone, email or address by keyed hash,
 * and forgetting that identifier removes the message with its deliveries (a phone's message once stayed).
 */
describe.each(['sqlite', 'postgres'] as const)('webhook messages and erasure on %s', (engine: Engine) => {
  let h: Harness
  let t: TestTenant
  let rx: Awaited<ReturnType<typeof startReceiver>>
  const skip = engine === 'postgres' && !hasPg

  beforeAll(async () => {
    if (skip) return
    rx = await startReceiver({ answer: () => 200 })
    h = await build({ engine, webhooks: { allowHttp: false, allowPrivate: true, ca: [rx.ca] } })
    t = await h.tenant()
  })
  afterAll(async () => {
    if (skip) return
    await h.close()
    await rx.close()
  })

  const api = (method: 'POST' | 'GET', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
  const messages = () =>
    h.store.db.all<{ type: string; phone_hash: string | null; email_hash: string | null }>(
      'SELECT event_type AS type, phone_hash, email_hash FROM webhook_messages WHERE tenant_id = ? ORDER BY created_ms, id',
      [t.tenantId],
    )
  const deliveries = async () =>
    (
      await h.store.db.get<{ n: number }>(
        'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE tenant_id = ?',
        [t.tenantId],
      )
    )?.n

  it.skipIf(skip)(
    'forgetting a phone removes the messages about its list entries, and only those',
    async () => {
      expect(
        (await api('POST', '/v1/webhooks', { url: rx.url, events: ['list.entry_added'] })).statusCode,
      ).toBe(200)
      for (const [type, value] of [
        ['phone', '+14155552671'],
        ['phone', '+14155550000'],
        ['email', 'someone@example.com'],
      ])
        expect((await api('POST', '/v1/lists', { list: 'block', type, value })).statusCode).toBe(200)
      const before = await messages()
      expect(before.map((m) => m.type)).toEqual(['list.entry_added', 'list.entry_added', 'list.entry_added'])
      const phone = (n: string) => h.hasher.entity('phone', n)
      expect(before.map((m) => m.phone_hash).sort()).toEqual(
        [phone('+14155550000'), phone('+14155552671'), null].sort(),
      )
      expect(Number(await deliveries())).toBe(3)

      expect((await api('POST', '/v1/forget', { phone: '+1 415 555 2671' })).statusCode).toBe(200)
      const after = await messages()
      expect(after.map((m) => m.phone_hash).sort()).toEqual([phone('+14155550000'), null].sort())
      expect(after.filter((m) => m.email_hash !== null)).toHaveLength(1)
      expect(Number(await deliveries())).toBe(2)
    },
  )
})
