import { afterEach, describe, expect, it } from 'vitest'
import { SESSION_IDLE_MS } from '../../src/services/console/console-auth.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { CONSOLE_PASSWORD, consoleSession } from '../helpers/console.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/** The console's tables and queries on both storage engines. */
describe.each<Engine>(['sqlite', 'postgres'])('console storage on %s', (engine) => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'users, taken emails, sessions, the review queue and the hourly overview',
    async () => {
      h = await build({ engine })
      const a = await h.tenant()
      const s = await consoleSession(h, a, 'same@example.com')
      const b = await h.tenant()
      const taken = await h.app.inject({
        method: 'POST',
        url: '/console/api/users',
        headers: s.write,
        payload: { email: 'SAME@example.com', password: CONSOLE_PASSWORD },
      })
      expect(taken.statusCode).toBe(409)
      expect((await h.store.console.listUsers(b.tenantId)).length).toBe(0)

      await h.app.inject({
        method: 'PUT',
        url: '/v1/config',
        headers: a.headers,
        payload: { thresholds: { review: 0 } },
      })
      const ids: string[] = []
      for (const event of ['one', 'two']) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/score',
          headers: a.headers,
          payload: { event },
        })
        ids.push(res.json().event_id)
        h.clock.advance(1000)
      }
      await h.app.inject({
        method: 'POST',
        url: '/v1/label',
        headers: s.write,
        payload: { label: 'legit', event_id: ids[0] },
      })
      const queue = await h.app.inject({ url: '/console/api/review', headers: s.read })
      expect(queue.json().events.map((e: { id: string }) => e.id)).toEqual([ids[1]])
      expect(queue.json().total).toBe(1)
      const overview = (await h.app.inject({ url: '/console/api/overview', headers: s.read })).json()
      expect(overview.hourly.reduce((n: number, x: { review: number }) => n + x.review, 0)).toBe(2)
      expect(overview.quota.used).toBe(2)

      h.clock.advance(SESSION_IDLE_MS)
      expect((await h.app.inject({ url: '/console/api/session', headers: s.read })).statusCode).toBe(401)
      expect(await h.store.db.all('SELECT id_hash FROM console_sessions')).toEqual([])
      expect(await h.store.tenants.delete(a.tenantId)).toBe(true)
      expect(await h.store.console.listUsers()).toEqual([])
    },
  )
})
