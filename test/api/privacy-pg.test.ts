import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { needlesIn, storeBytes } from '../helpers/store-bytes.js'

const hasPg = await pgAvailable()

describe('labels, export and erasure on PostgreSQL', () => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(!hasPg)(
    'flags the network, exports, erases alias-aware, and the rewrite leaves no byte of the person in any file',
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
      // The user id and the storage hashes of the email and IP are in the relations' files before.
      const needles = [
        'pg-user',
        h.hasher.entity('email', 'pgperson@gmail.com'),
        h.hasher.entity('ip', '79.200.1.1'),
      ]
      expect(needlesIn(await storeBytes(h, 'postgres'), needles)).toEqual([...needles].sort())
      const forget = (
        await post('/v1/forget', { email: 'pgperson+y@gmail.com', user_id: 'pg-user', ip: '79.200.1.1' })
      ).json()
      // VACUUM alone leaves the dead rows' bytes in the pages: the answer says so until the rewrite.
      expect(forget).toMatchObject({
        deleted: { events: 1, labels: 1 },
        suppressions: 3,
        storage: 'pending',
      })
      expect((await post('/v1/subject', { user_id: 'pg-user' })).json().counts.events).toBe(0)
      const waiting = (
        await h.store.db.all<{ table_name: string }>('SELECT table_name FROM storage_compaction')
      ).map((r) => r.table_name)
      expect(waiting).toEqual(expect.arrayContaining(['events', 'labels', 'device_links']))
      // The other tenant received the same request: its event of the person goes too.
      expect(
        (await post('/v1/forget', { email: 'pgperson@gmail.com' }, b.headers)).json().deleted.events,
      ).toBe(1)
      expect(await h.jobs.runNow('storage-compaction')).toBe(true)
      // Only the shared network keeps the hashes it was given: erasure never scrubs it.
      const local = await storeBytes(h, 'postgres', { exceptTables: ['network_flags'] })
      expect(needlesIn(local, needles)).toEqual([])
      expect(needlesIn(await storeBytes(h, 'postgres'), needles)).toEqual(needles.slice(1).sort())
      expect(await h.store.db.all('SELECT table_name FROM storage_compaction')).toEqual([])
      const sup = (await h.app.inject({ url: '/v1/suppressions', headers: a.headers })).json().suppressions
      expect(sup).toHaveLength(3)
    },
  )
})
