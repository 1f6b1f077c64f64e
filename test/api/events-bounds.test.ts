import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const N = 12_000

/**
 * GET /v1/events over more events than its bounds (issue 26, item 5): a capped offset with a keyset
 * cursor to page on, a capped count, and filters no index serves searching a bounded window.
 */
describe.each<Engine>(['sqlite', 'postgres'])('GET /v1/events bounds on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  let t0: number
  const id = (i: number) => `ev${100_000 + i}`
  beforeAll(async () => {
    if (engine === 'postgres' && !hasPg) return
    h = await build({ engine })
    t = await h.tenant()
    t0 = h.clock.now() - 2 * N
    // N events, one per millisecond, event i at t0 + i: the newest is ev112000. Two carry a rare
    // reason: one among the newest 2,500, one older than them.
    await h.store.db.run(
      `INSERT INTO events (id, tenant_id, created_ms, event, user_id, score, verdict, reasons, checks, asn_bad)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
       SELECT 'ev' || (100000 + i), ?, CAST(? AS BIGINT) + i, 'login', 'u' || (i % 100), 10, 'allow',
              CASE WHEN i IN (2000, 11000) THEN '["abuse_ip"]' ELSE '["geo_mismatch"]' END, '[]', 0
         FROM n`,
      [t.tenantId, t0],
    )
  }, 60_000)
  afterAll(async () => {
    await h?.close()
  })
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  const get = (qs: string) => h.app.inject({ url: `/v1/events?${qs}`, headers: t.headers })
  const page = async (qs: string) => {
    const res = await get(qs)
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as {
      events: { id: string }[]
      total: number
      totalCapped: boolean
      searchedTo: string | null
    }
  }

  run('refuses an offset past 1,000, naming the field and the cursor to use instead', async () => {
    const res = await get('offset=1001')
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toMatch(/query\.offset/)
    expect(res.json().error).toMatch(/before=/)
    expect((await page('offset=1000&limit=1')).events.map((e) => e.id)).toEqual([id(N - 1000)])
  })

  run('counts at most 10,000 events and says so', async () => {
    const all = await page('limit=1')
    expect(all.total).toBe(10_000)
    expect(all.totalCapped).toBe(true)
    expect(all.searchedTo).toBeNull()
    const few = await page(`since_ms=${t0 + N - 4}`)
    expect(few).toMatchObject({ total: 5, totalCapped: false, searchedTo: null })
  })

  run('pages on past the offset cap with the before cursor', async () => {
    const first = await page('limit=3')
    expect(first.events.map((e) => e.id)).toEqual([id(N), id(N - 1), id(N - 2)])
    const next = await page(`limit=2&before=${id(N - 2)}`)
    expect(next.events.map((e) => e.id)).toEqual([id(N - 3), id(N - 4)])
    const deep = await page(`limit=1&before=${id(N - 11_000)}`)
    expect(deep.events.map((e) => e.id)).toEqual([id(N - 11_001)])
    const unknown = await get('before=nope')
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toMatch(/query\.before/)
  })

  run('searches a reason only in the newest 2,500 events of the range, then on from searchedTo', async () => {
    const recent = await page('reason=abuse_ip')
    expect(recent.events.map((e) => e.id)).toEqual([id(11_000)])
    expect(recent.total).toBe(1)
    expect(recent.totalCapped).toBe(true)
    // The window is the newest 2,500: events N … N − 2,499.
    expect(recent.searchedTo).toBe(id(N - 2499))
    // Following searchedTo walks the older events 2,500 at a time until the range is done.
    const found: string[] = []
    const windows: (string | null)[] = []
    let cursor = recent.searchedTo
    while (cursor !== null) {
      const older = await page(`reason=abuse_ip&before=${cursor}`)
      found.push(...older.events.map((e) => e.id))
      cursor = older.searchedTo
      windows.push(cursor)
    }
    expect(found).toEqual([id(2000)])
    expect(windows).toEqual([id(7001), id(4501), id(2001), null])
    // A time range that fits in the window is searched whole.
    const ranged = await page(`reason=abuse_ip&until_ms=${t0 + 2400}`)
    expect(ranged.events.map((e) => e.id)).toEqual([id(2000)])
    expect(ranged.searchedTo).toBeNull()
    // q (a LIKE scan) is bounded the same way.
    const q = await page('q=u7&limit=1')
    expect(q.searchedTo).toBe(id(N - 2499))
  })

  run(
    'a window whose events share one millisecond (one large batch) takes that millisecond whole',
    async () => {
      const b = await h.tenant()
      const at = h.clock.now() - 10 * N
      // 2,600 events in one millisecond (more than the window), and 10 older ones.
      await h.store.db.run(
        `INSERT INTO events (id, tenant_id, created_ms, event, user_id, score, verdict, reasons, checks, asn_bad)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2610)
       SELECT 'tie' || (100000 + i), ?, CASE WHEN i <= 2600 THEN CAST(? AS BIGINT) ELSE CAST(? AS BIGINT) - i END,
              'login', 'u', 10, 'allow', '["geo_mismatch"]', '[]', 0
         FROM n`,
        [b.tenantId, at, at],
      )
      const get = async (qs: string) => {
        const res = await h.app.inject({ url: `/v1/events?${qs}`, headers: b.headers })
        expect(res.statusCode, res.body).toBe(200)
        return res.json() as { events: { id: string }[]; total: number; searchedTo: string | null }
      }
      const first = await get('reason=geo_mismatch&limit=1')
      expect(first.total).toBe(2600)
      expect(first.searchedTo).toBe('tie100001')
      const rest = await get(`reason=geo_mismatch&before=${first.searchedTo}`)
      expect(rest.total).toBe(10)
      expect(rest.searchedTo).toBeNull()
    },
  )
})
