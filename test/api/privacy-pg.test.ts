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
      const post = (url: string, payload: object, headers: Record<string, string> = a.headers) =>
        h.app.inject({ method: 'POST', url, headers, payload })
      // Under an Idempotency-Key: the stored response (canonical email, device token) is sealed.
      const ev = (
        await post(
          '/v1/score',
          { event: 'signup', user_id: 'pg-user', email: 'pg.person+x@gmail.com', ip: '79.200.1.1' },
          { ...a.headers, 'idempotency-key': 'pg-order-1' },
        )
      ).json()
      expect(ev.identity.email_canonical).toBe('pgperson@gmail.com')
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
      const before = await storeBytes(h, 'postgres')
      expect(needlesIn(before, needles)).toEqual([...needles].sort())
      // The response kept for the key's retries is sealed: no file holds the canonical email.
      expect(needlesIn(before, ['pgperson@gmail.com', 'pg.person'])).toEqual([])
      const forget = (
        await post('/v1/forget', { email: 'pgperson+y@gmail.com', user_id: 'pg-user', ip: '79.200.1.1' })
      ).json()
      // VACUUM alone leaves the dead rows' bytes in the pages: the answer says so until the rewrite.
      expect(forget).toMatchObject({
        deleted: { events: 1, labels: 1, idempotent_responses: 1 },
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
    120_000,
  )

  it.skipIf(!hasPg)(
    'erasure and tenant deletion reach every monthly partition and the default one',
    async () => {
      h = await build({ engine: 'postgres' })
      const a = await h.tenant()
      const b = await h.tenant()
      const NOW = Date.UTC(2026, 10, 23, 12)
      // Last August and this month (partitions made for them) and far ahead (no partition: default).
      await h.store.partitions.ensure(Date.UTC(2026, 7, 1), 0)
      await h.store.partitions.ensure(NOW, 0)
      const times = [Date.UTC(2026, 7, 5), NOW, Date.UTC(2040, 0, 1)]
      for (const headers of [a.headers, b.headers]) {
        for (const at of times) {
          h.clock.set(at)
          const post = (url: string, payload: object) =>
            h.app.inject({ method: 'POST', url, headers, payload })
          // The email alone ties the observation to the person (through its event).
          expect(
            (
              await post('/v1/score', {
                event: 'login',
                email: 'part.person@example.com',
                device_id: 'p'.repeat(32),
              })
            ).statusCode,
          ).toBe(200)
          expect((await post('/v1/check/email', { email: 'part.person@example.com' })).statusCode).toBe(200)
          expect((await post('/v1/score', { event: 'login', user_id: 'bystander' })).statusCode).toBe(200)
        }
      }
      const count = async (table: string, tenantId: string) =>
        Number(
          (
            await h.store.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?`, [
              tenantId,
            ])
          )?.n,
        )
      expect(await count('events_default', a.tenantId)).toBe(2)
      expect(await count('device_observations', a.tenantId)).toBe(3)
      const forget = await h.app.inject({
        method: 'POST',
        url: '/v1/forget',
        headers: a.headers,
        payload: { email: 'part.person@example.com' },
      })
      expect(forget.json()).toMatchObject({ deleted: { events: 3, lookups: 3, observations: 3 } })
      expect(await count('events', a.tenantId)).toBe(3)
      expect(await count('device_observations', a.tenantId)).toBe(0)
      expect(await count('lookups', a.tenantId)).toBe(0)
      // The other tenant is untouched until it is deleted; then nothing of it remains anywhere.
      expect(await count('device_observations', b.tenantId)).toBe(3)
      expect(await h.store.tenants.delete(b.tenantId)).toBe(true)
      for (const table of ['events', 'device_observations', 'lookups', 'events_default'])
        expect(await count(table, b.tenantId)).toBe(0)
      expect(await count('events', a.tenantId)).toBe(3)
    },
    60_000,
  )
})
