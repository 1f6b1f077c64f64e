import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

// A Berlin landline in national format: valid in Germany (+49 30 1234567) and, as the same digits, in
// about fifteen other countries. The body of /v1/forget and /v1/subject has no country field.
const NATIONAL = '030 1234567'
const E164_DE = '+49301234567'

describe.each<Engine>(['sqlite', 'postgres'])('phone erasure by every E.164 reading (%s)', (engine) => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'a national number finds and erases rows scored with phone_country, and rows scored without it',
    async () => {
      h = await build({ engine })
      const t = await h.tenant()
      const post = (url: string, payload: object) =>
        h.app.inject({ method: 'POST', url, headers: t.headers, payload })
      const withCountry = await post('/v1/score', {
        event: 'signup',
        user_id: 'p-1',
        phone: NATIONAL,
        phone_country: 'DE',
      })
      expect(withCountry.statusCode).toBe(200)
      // The stored key is the German E.164 number.
      const [row] = await h.store.db.all<{ phone_hash: string; phone_country: string }>(
        'SELECT phone_hash, phone_country FROM events WHERE id = ?',
        [withCountry.json().event_id],
      )
      expect(row).toEqual({ phone_hash: h.hasher.entity('phone', E164_DE), phone_country: 'DE' })
      await post('/v1/score', { event: 'login', user_id: 'p-1', phone: NATIONAL })
      await post('/v1/score', {
        event: 'login',
        user_id: 'p-1',
        phone: '+49 30 1234567',
        email: 'p1@example.com',
      })
      expect((await post('/v1/check/phone', { phone: NATIONAL, country: 'DE' })).statusCode).toBe(200)
      // Another person's number stays.
      await post('/v1/score', { event: 'signup', user_id: 'p-2', phone: '030 7654321', phone_country: 'DE' })

      const exported = (await post('/v1/subject', { phone: NATIONAL })).json()
      expect(exported.counts).toMatchObject({ events: 3, lookups: 1 })
      // One event found both by its email and by a phone reading appears and counts once.
      const both = (await post('/v1/subject', { phone: NATIONAL, email: 'p1@example.com' })).json()
      expect(both.counts.events).toBe(3)
      expect(new Set(both.events.map((e: { id: string }) => e.id)).size).toBe(3)

      const forgotten = await post('/v1/forget', { phone: NATIONAL })
      expect(forgotten.statusCode).toBe(200)
      expect(forgotten.json().deleted).toMatchObject({ events: 3, lookups: 1 })
      expect((await post('/v1/subject', { phone: NATIONAL })).json().counts).toMatchObject({
        events: 0,
        lookups: 0,
      })
      expect((await post('/v1/subject', { phone: '+49301234567' })).json().counts.events).toBe(0)
      const left = await h.app.inject({ url: '/v1/events', headers: t.headers })
      expect(left.json().events.map((e: { userId: string }) => e.userId)).toEqual(['p-2'])
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'an international number matches only itself, not the readings of its national digits',
    async () => {
      h = await build({ engine })
      const t = await h.tenant()
      const post = (url: string, payload: object) =>
        h.app.inject({ method: 'POST', url, headers: t.headers, payload })
      await post('/v1/score', { event: 'signup', user_id: 'fr', phone: '030 1234567', phone_country: 'FR' })
      await post('/v1/score', { event: 'signup', user_id: 'de', phone: '030 1234567', phone_country: 'DE' })
      const res = (await post('/v1/forget', { phone: '+49 30 1234567' })).json()
      expect(res.deleted.events).toBe(1)
      expect(res.suppressions).toBe(1)
      const left = await h.app.inject({ url: '/v1/events', headers: t.headers })
      expect(left.json().events.map((e: { userId: string }) => e.userId)).toEqual(['fr'])
    },
  )
})
