import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

describe('labels, export and erasure on PostgreSQL', () => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(!hasPg)(
    'flags the network, exports, erases alias-aware and vacuums the touched tables',
    async () => {
      h = await build({ engine: 'postgres' })
      const a = await h.tenant({ shareNetwork: true })
      const b = await h.tenant()
      const post = (url: string, payload: object, headers = a.headers) =>
        h.app.inject({ method: 'POST', url, headers, payload })
      const ev = (
        await post('/v1/score', {
          event: 'signup',
          user_id: 'pg-user',
          email: 'pg.person+x@gmail.com',
          ip: '79.200.1.1',
        })
      ).json()
      expect(
        (await post('/v1/label', { label: 'fraud', event_id: ev.event_id })).json().network.contributed,
      ).toHaveLength(3)
      const seen = (
        await post('/v1/score', { event: 'login', email: 'pgperson@gmail.com' }, b.headers)
      ).json()
      expect(seen.reasons).toContain('seen_in_fraud_network')
      expect((await post('/v1/subject', { email: 'PG.Person@googlemail.com' })).json().counts).toMatchObject({
        events: 1,
        labels: 1,
      })
      const forget = (await post('/v1/forget', { email: 'pgperson+y@gmail.com', user_id: 'pg-user' })).json()
      expect(forget).toMatchObject({
        deleted: { events: 1, labels: 1 },
        suppressions: 2,
        storage: 'reclaimed',
      })
      expect((await post('/v1/subject', { user_id: 'pg-user' })).json().counts.events).toBe(0)
      const sup = (await h.app.inject({ url: '/v1/suppressions', headers: a.headers })).json().suppressions
      expect(sup).toHaveLength(2)
    },
  )
})
