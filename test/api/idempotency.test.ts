import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const DAY = 86_400_000

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe.each<Engine>(['sqlite', 'postgres'])('Idempotency-Key on %s', (engine) => {
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  let t: TestTenant
  const setup = async (tenant: Parameters<Harness['tenant']>[0] = {}) => {
    h = await build({ engine })
    t = await h.tenant({ rateLimit: 100_000, ...tenant })
  }
  const post = (url: string, payload: object, key?: string, headers = t.headers) =>
    h!.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload,
    })
  const count = async (table: string) =>
    Number(
      (
        await h!.store.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`, [
          t.tenantId,
        ])
      )?.n,
    )
  const used = async () =>
    Number(
      (
        await h!.store.db.get<{ n: number }>('SELECT sum(used) AS n FROM usage WHERE tenant_id = ?', [
          t.tenantId,
        ])
      )?.n,
    )
  const body = { event: 'signup', user_id: 'u-1', ip: '81.2.69.160', device_id: 'fp-idem-1' }

  run('a retry with the same key and body replays the first response and records nothing more', async () => {
    await setup()
    const first = await post('/v1/score', body, 'order-1001')
    expect(first.statusCode).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    // Reordered keys are the same body.
    const again = await post(
      '/v1/score',
      { device_id: 'fp-idem-1', ip: '81.2.69.160', user_id: 'u-1', event: 'signup' },
      'order-1001',
    )
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await count('events')).toBe(1)
    expect(await count('device_observations')).toBe(1)
    expect(await used()).toBe(1)
    // Velocity saw one event: a new event of the same user is the second, not the third.
    const next = await post('/v1/score', { ...body, user_id: 'u-2' })
    expect(next.json().event_id).not.toBe(first.json().event_id)
    expect(await count('events')).toBe(2)
    // Without a key every call is new.
    await post('/v1/score', body)
    expect(await count('events')).toBe(3)
  })

  run('the same key with another body is refused with 422 and records nothing', async () => {
    await setup()
    expect((await post('/v1/score', body, 'k-1')).statusCode).toBe(200)
    const other = await post('/v1/score', { ...body, user_id: 'someone-else' }, 'k-1')
    expect(other.statusCode).toBe(422)
    expect(other.json()).toMatchObject({ code: 'unprocessable' })
    expect(other.json().error).toContain('Idempotency-Key')
    expect(await count('events')).toBe(1)
  })

  run('keys belong to one tenant and one route', async () => {
    await setup()
    const first = (await post('/v1/score', body, 'shared-key')).json()
    const other = await h!.tenant({ rateLimit: 100_000 })
    const theirs = await post('/v1/score', body, 'shared-key', other.headers)
    expect(theirs.statusCode).toBe(200)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.json().event_id).not.toBe(first.event_id)
    const lab = await post('/v1/label', { label: 'fraud', event_id: first.event_id }, 'shared-key')
    expect(lab.statusCode).toBe(200)
    expect(lab.headers['idempotent-replayed']).toBeUndefined()
  })

  run('concurrent duplicates: one event, every answer the same', async () => {
    await setup()
    const answers = await Promise.all(Array.from({ length: 12 }, () => post('/v1/score', body, 'burst-1')))
    for (const a of answers) expect(a.statusCode, a.body).toBe(200)
    const ids = new Set(answers.map((a) => a.json().event_id))
    expect(ids.size).toBe(1)
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(11)
    expect(await count('events')).toBe(1)
    expect(await used()).toBe(1)
  })

  run('batch, label and forget replay too', async () => {
    await setup()
    const rows = [body, { ...body, user_id: 'u-9' }]
    const b1 = await post('/v1/batch/score', { rows }, 'batch-1')
    const b2 = await post('/v1/batch/score', { rows }, 'batch-1')
    expect(b2.headers['idempotent-replayed']).toBe('true')
    expect(b2.json()).toEqual(b1.json())
    expect(await count('events')).toBe(2)
    expect(await used()).toBe(2)
    const id = b1.json().results[0].event_id
    const l1 = await post('/v1/label', { label: 'fraud', event_id: id }, 'label-1')
    const l2 = await post('/v1/label', { label: 'fraud', event_id: id }, 'label-1')
    expect(l2.headers['idempotent-replayed']).toBe('true')
    expect(l2.json()).toEqual(l1.json())
    expect(await count('labels')).toBe(1)
    const f1 = await post('/v1/forget', { user_id: 'u-9' }, 'forget-1')
    const f2 = await post('/v1/forget', { user_id: 'u-9' }, 'forget-1')
    expect(f1.json().deleted.events).toBe(1)
    expect(f2.headers['idempotent-replayed']).toBe('true')
    expect(f2.json()).toEqual(f1.json())
    expect(await count('suppressions')).toBe(1)
  })

  run('a key lives 24 hours; the expiry job deletes it', async () => {
    await setup()
    const first = (await post('/v1/score', body, 'daily')).json()
    h!.clock.advance(DAY - 1000)
    expect((await post('/v1/score', body, 'daily')).headers['idempotent-replayed']).toBe('true')
    h!.clock.advance(2000)
    const later = await post('/v1/score', body, 'daily')
    expect(later.headers['idempotent-replayed']).toBeUndefined()
    expect(later.json().event_id).not.toBe(first.event_id)
    expect(await count('idempotency_keys')).toBe(1)
    h!.clock.advance(DAY + 1000)
    await h!.jobs.runNow('idempotency-expiry')
    expect(await count('idempotency_keys')).toBe(0)
  })

  run('a refused request (over quota, bad key) leaves the key unused', async () => {
    await setup({ monthlyQuota: 1 })
    expect((await post('/v1/score', body, 'a')).statusCode).toBe(200)
    const over = await post('/v1/score', body, 'b')
    expect(over.statusCode).toBe(429)
    expect(await count('idempotency_keys')).toBe(1)
    for (const bad of ['', 'has space', 'x'.repeat(256), 'naïve']) {
      const res = await post('/v1/score', body, bad)
      expect(res.statusCode, bad).toBe(400)
      expect(res.json().error).toContain('idempotency-key')
    }
    expect(await count('events')).toBe(1)
  })
})
