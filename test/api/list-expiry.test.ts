import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])('list entries with an expiry on %s', (engine) => {
  let h: Harness | undefined
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await h?.close()
    await close?.()
    h = undefined
    close = undefined
  })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('stops matching on the next request after its expiry, before any purge; notes are kept', async () => {
    h = await build({ engine })
    h.clock.set(1_800_000_000_000)
    const t = await h.tenant()
    const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
      h!.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
    const expires = h.clock.now() + 60_000
    const added = await api('POST', '/v1/lists', {
      list: 'block',
      type: 'user',
      value: 'u-exp',
      expires_ms: expires,
      note: 'chargeback pending',
    })
    expect(added.statusCode).toBe(200)
    expect(added.json()).toMatchObject({ expires_ms: expires, note: 'chargeback pending' })
    const score = async () => (await api('POST', '/v1/score', { event: 'login', user_id: 'u-exp' })).json()
    expect((await score()).verdict).toBe('block')
    h.clock.set(expires - 1)
    expect((await score()).verdict).toBe('block')
    h.clock.set(expires)
    const after = await score()
    expect(after.verdict).toBe('allow')
    expect(after.reasons).not.toContain('blocklist_user')
    // Still listed (with its expiry) until the job purges it.
    const listed = (await api('GET', '/v1/lists')).json().entries
    expect(listed).toEqual([expect.objectContaining({ value: 'u-exp', expires_ms: expires })])
  })

  run('refuses an expiry that is not in the future, naming the field', async () => {
    h = await build({ engine })
    h.clock.set(1_800_000_000_000)
    const t = await h.tenant()
    const post = (payload: object) =>
      h!.app.inject({ method: 'POST', url: '/v1/lists', headers: t.headers, payload })
    const past = await post({ list: 'block', type: 'user', value: 'x', expires_ms: h.clock.now() })
    expect(past.statusCode).toBe(400)
    expect(past.json().error).toBe('body.expires_ms must be in the future')
    const batch = await h.app.inject({
      method: 'POST',
      url: '/v1/batch/lists',
      headers: t.headers,
      payload: { rows: [{ list: 'allow', type: 'user', value: 'y', expires_ms: 5 }] },
    })
    expect(batch.statusCode).toBe(400)
    expect(batch.json().error).toBe('body.rows[0].expires_ms must be in the future')
    const long = await post({ list: 'block', type: 'user', value: 'x', note: 'n'.repeat(501) })
    expect(long.statusCode).toBe(400)
  })

  run(
    'the list-expiry job deletes expired entries with a signed list.entry_expired webhook each',
    async () => {
      const rx = await startReceiver()
      close = rx.close
      h = await build({ engine, webhooks: { allowHttp: false, allowPrivate: true, ca: [rx.ca] } })
      h.clock.set(Date.now())
      const t = await h.tenant()
      const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
        h!.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
      const ep = (await api('POST', '/v1/webhooks', { url: rx.url, events: ['list.entry_expired'] })).json()
      const now = h.clock.now()
      await api('POST', '/v1/lists', {
        list: 'block',
        type: 'email',
        value: 'gone@example.com',
        expires_ms: now + 1000,
      })
      await api('POST', '/v1/lists', {
        list: 'block',
        type: 'user',
        value: 'stays',
        expires_ms: now + 86_400_000,
      })
      await api('POST', '/v1/lists', { list: 'allow', type: 'user', value: 'forever' })
      h.clock.advance(1000)
      await h.jobs.runNow('list-expiry')
      const left = (await api('GET', '/v1/lists')).json().entries.map((e: { value?: string }) => e.value)
      expect(left.sort()).toEqual(['forever', 'stays'])
      while ((await h.services.webhooks.runOnce()) > 0) {}
      expect(rx.received).toHaveLength(1)
      const r = rx.received[0]!
      vi.setSystemTime(Number(r.headers['webhook-timestamp']) * 1000)
      try {
        const msg = new Webhook(ep.secret).verify(r.body, r.headers) as {
          type: string
          data: Record<string, unknown>
        }
        expect(msg.type).toBe('list.entry_expired')
        expect(msg.data).toMatchObject({ list: 'block', type: 'email' })
        expect(msg.data['value_hash']).toMatch(/^[A-Za-z0-9_-]+$/)
        expect(r.body).not.toContain('gone@example.com')
      } finally {
        vi.useRealTimers()
      }
      // Nothing else expired: a second run deletes nothing.
      await h.jobs.runNow('list-expiry')
      expect((await api('GET', '/v1/lists')).json().entries).toHaveLength(2)
    },
  )
})
