import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])('events, stats and scoring on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  const score = (payload: object, headers = t.headers) =>
    h.app.inject({ method: 'POST', url: '/v1/score', headers, payload })
  const events = async (q = '') => (await h.app.inject({ url: `/v1/events${q}`, headers: t.headers })).json()

  run('lists events newest first with paging and filters, exposing emailHash/emailDomain only', async () => {
    await setup()
    await score({ event: 'signup', user_id: 'Alice-1', device_id: 'fp-AAA', email: 'alice@yopmail.com' })
    h.clock.advance(1000)
    await score({ event: 'login', user_id: 'bob-2', device_id: 'fp-bbb', ip: '8.8.8.8' })
    h.clock.advance(1000)
    await score({ event: 'login', user_id: 'carol_3', device: { is_headless: true, is_tampered: true } })
    const all = await events()
    expect(all.total).toBe(3)
    expect(all.limit).toBe(50)
    expect(all.events.map((e: { userId: string }) => e.userId)).toEqual(['carol_3', 'bob-2', 'Alice-1'])
    const alice = all.events[2]
    expect(alice.emailDomain).toBe('yopmail.com')
    expect(alice.emailHash).toBe(h.hasher.entity('email', 'alice@yopmail.com'))
    expect(JSON.stringify(all)).not.toContain('alice@')
    expect(JSON.stringify(all)).not.toContain('8.8.8.8')
    expect((await events('?limit=1&offset=1')).events.map((e: { userId: string }) => e.userId)).toEqual([
      'bob-2',
    ])
    expect((await events('?event=login')).total).toBe(2)
    expect((await events('?verdict=block')).events.map((e: { userId: string }) => e.userId)).toEqual([
      'carol_3',
    ])
    expect((await events('?verdict=allow')).events.map((e: { userId: string }) => e.userId)).toEqual([
      'Alice-1',
    ])
    expect((await events('?verdict=review')).events.map((e: { userId: string }) => e.userId)).toEqual([
      'bob-2',
    ])
    expect((await events('?q=alice')).events.map((e: { userId: string }) => e.userId)).toEqual(['Alice-1'])
    expect((await events('?q=FP-BB')).events.map((e: { userId: string }) => e.userId)).toEqual(['bob-2'])
    expect((await events('?q=_')).events.map((e: { userId: string }) => e.userId)).toEqual(['carol_3'])
    expect((await events('?q=%25')).total).toBe(0)
    const other = await h.tenant()
    expect((await h.app.inject({ url: '/v1/events', headers: other.headers })).json().total).toBe(0)
  })

  run('validates the events query', async () => {
    await setup()
    const bad = async (q: string, field: string) => {
      const res = await h.app.inject({ url: `/v1/events${q}`, headers: t.headers })
      expect(res.statusCode, q).toBe(400)
      expect(res.json().error, q).toContain(field)
    }
    expect((await h.app.inject({ url: '/v1/events?limit=200', headers: t.headers })).statusCode).toBe(200)
    await bad('?limit=201', 'query.limit')
    await bad('?limit=0', 'query.limit')
    await bad('?limit=ten', 'query.limit')
    await bad('?offset=-1', 'query.offset')
    await bad('?verdict=maybe', 'query.verdict')
    await bad(`?event=${'e'.repeat(65)}`, 'query.event')
    await bad(`?q=${'q'.repeat(257)}`, 'query.q')
    await bad('?sort=asc', 'query.sort')
    expect(
      (
        await h.app.inject({
          url: `/v1/events?event=${'e'.repeat(64)}&q=${'q'.repeat(256)}`,
          headers: t.headers,
        })
      ).statusCode,
    ).toBe(200)
  })

  run('aggregates stats over a rolling window of the clock', async () => {
    await setup()
    await score({ event: 'a' }) // allow, 0
    await score({ event: 'b', ip: '8.8.8.8' }) // review, 45
    h.clock.advance(2 * 3600_000)
    await score({ event: 'c', ip: '8.8.8.8', device: { is_headless: true } }) // block, 90
    await score({ event: 'd', device: { is_headless: true } }) // review, 45
    const stats = async (q = '') => (await h.app.inject({ url: `/v1/stats${q}`, headers: t.headers })).json()
    const day = await stats()
    expect(day).toMatchObject({ windowHours: 24, total: 4, avgScore: 45 })
    expect(day.verdicts).toEqual({
      allow: { count: 1, avgScore: 0 },
      review: { count: 2, avgScore: 45 },
      block: { count: 1, avgScore: 90 },
    })
    expect(day.topReasons).toEqual([
      { reason: 'datacenter_ip', count: 2 },
      { reason: 'headless_browser', count: 2 },
    ])
    const hour = await stats('?window_hours=1')
    expect(hour.total).toBe(2)
    expect(hour.verdicts.allow).toEqual({ count: 0, avgScore: null })
    h.clock.advance(23 * 3600_000)
    expect((await stats()).total).toBe(2)
    h.clock.advance(3 * 3600_000)
    expect((await stats()).total).toBe(0)
    expect((await h.app.inject({ url: '/v1/stats?window_hours=0', headers: t.headers })).statusCode).toBe(400)
    expect((await h.app.inject({ url: '/v1/stats?window_hours=8761', headers: t.headers })).statusCode).toBe(
      400,
    )
    expect(
      (await h.app.inject({ url: '/v1/stats?window_hours=x', headers: t.headers })).json().error,
    ).toContain('query.window_hours')
  })

  run('group commit: concurrent scores all land and each sees the ones before it', async () => {
    await setup()
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => score({ event: 'signup', ip: '79.200.1.1', user_id: `c-${i}` })),
    )
    expect(results.every((r) => r.statusCode === 200)).toBe(true)
    const accounts = results
      .map(
        (r) =>
          r.json().checks.find((c: { reason: string }) => c.reason === 'ip_velocity')?.evidence.accounts ?? 0,
      )
      .sort((a: number, b: number) => a - b)
    // Each request saw exactly the requests committed before it: counts 5..40 appear once each.
    expect(accounts.filter((n: number) => n > 0)).toEqual(Array.from({ length: 36 }, (_, i) => i + 5))
    expect((await events('?limit=200')).total).toBe(40)
  })

  run('one failing request in a group does not affect the others', async () => {
    await setup()
    const small = await h.tenant({ monthlyQuota: 3 })
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => score({ event: 'x' }, small.headers)),
      ...Array.from({ length: 5 }, () => score({ event: 'y' })),
    ])
    expect(results.map((r) => r.statusCode).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 429, 429,
    ])
    expect((await events()).total).toBe(5)
  })
})
