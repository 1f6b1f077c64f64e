import { readFileSync, statSync } from 'node:fs'
import { endianness } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { buildSqlite, eventually } from '../helpers/app.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
afterEach(async () => {
  await h?.close()
})

const post = (url: string, t: TestTenant, payload: object) =>
  h.app.inject({ method: 'POST', url, headers: t.headers, payload })
const health = async () => (await h.app.inject({ url: '/v1/health' })).json()

describe('SQLite executor: another process holds the write lock', () => {
  it('answers 503 with Retry-After within the busy budget, health says degraded, and the event loop keeps going', async () => {
    const s = await buildSqlite({ busyBudgetMs: 1000 })
    h = s
    const t = await h.tenant()
    // Another process (here: another connection) takes the write lock and keeps it.
    const other = new Database(s.file)
    other.exec('BEGIN IMMEDIATE')
    const txs = vi.spyOn(h.store.db, 'tx')
    try {
      const order: string[] = []
      const scoring = post('/v1/score', t, { event: 'signup', user_id: 'u-1', ip: '73.162.10.20' }).then(
        (r) => {
          order.push('score')
          return r
        },
      )
      // Started once the score waits for the lock (its transaction began, and BEGIN found the lock
      // taken): health must not wait behind that wait.
      expect(
        await eventually(() => txs.mock.calls.length > 0, 5000, 5),
        'the score never began a transaction',
      ).toBe(true)
      const healthy = h.app.inject({ url: '/v1/health' }).then((r) => {
        order.push('health')
        return r
      })
      const [scored, checked] = await Promise.all([scoring, healthy])
      expect(order).toEqual(['health', 'score'])
      expect(scored.statusCode, scored.body).toBe(503)
      expect(scored.headers['retry-after']).toMatch(/^\d+$/)
      expect(scored.json()).toEqual({
        error: 'storage is temporarily unavailable; retry shortly',
        code: 'unavailable',
        request_id: scored.headers['x-request-id'],
      })
      expect(checked.json()).toEqual({ status: 'degraded', reason: 'database_unreachable' })

      const listed = await post('/v1/lists', t, { list: 'block', type: 'user', value: 'u-9' })
      expect(listed.statusCode, listed.body).toBe(503)
      expect(listed.headers['retry-after']).toMatch(/^\d+$/)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    // The refused requests left nothing behind and held nothing: the next ones go through.
    expect(await h.store.db.all('SELECT id FROM events')).toEqual([])
    expect(await h.store.db.all('SELECT id FROM list_entries')).toEqual([])
    expect(await health()).toEqual({ status: 'ok' })
    const scored = await post('/v1/score', t, { event: 'signup', user_id: 'u-1', ip: '73.162.10.20' })
    expect(scored.statusCode, scored.body).toBe(200)
    const listed = await post('/v1/lists', t, { list: 'block', type: 'user', value: 'u-9' })
    expect(listed.statusCode, listed.body).toBe(200)
  })
})

describe('SQLite executor: transactions of concurrent requests', () => {
  /**
   * One round: list adds of tenant A (each must be acknowledged), identifier checks of a fresh tenant B
   * with one unit of quota (they pass the read-only pre-check together and all but one are refused
   * inside their transaction, which rolls back) and scores of both, all in flight at once. Returns how
   * many of B's requests were refused.
   */
  const round = (a: TestTenant, b: TestTenant, tag: string, acknowledged: string[]) => {
    const ops: Promise<number>[] = []
    for (let i = 0; i < 12; i++) {
      const value = `user-${tag}-${i}`
      ops.push(
        post('/v1/lists', a, { list: 'block', type: 'user', value }).then((res) => {
          expect(res.statusCode, res.body).toBe(200)
          acknowledged.push(value)
          return 0
        }),
      )
      if (i % 2 === 0) {
        ops.push(
          post('/v1/check/ip', b, { ip: `73.162.${i}.1` }).then((res) => {
            expect([200, 429], res.body).toContain(res.statusCode)
            return res.statusCode === 429 ? 1 : 0
          }),
        )
      }
      if (i % 3 === 0) {
        ops.push(
          post('/v1/score', i % 2 ? a : b, { event: 'login', user_id: value, ip: '73.162.10.20' }).then(
            (res) => {
              expect([200, 429], res.body).toContain(res.statusCode)
              return res.statusCode === 429 ? 1 : 0
            },
          ),
        )
      }
    }
    return Promise.all(ops).then((r) => r.reduce((x, y) => x + y, 0))
  }

  const listedValues = async (t: TestTenant) => {
    const page = (await h.app.inject({ url: '/v1/lists?limit=1000', headers: t.headers })).json()
    expect(page.total).toBe(page.entries.length)
    return new Set(page.entries.map((e: { value: string }) => e.value))
  }

  it('never lets a statement of one request run inside (and roll back with) another request’s transaction', async () => {
    h = await build()
    const a = await h.tenant({ rateLimit: 100_000 })
    const acknowledged: string[] = []
    let refused = 0
    for (let r = 0; r < 8; r++)
      refused += await round(a, await h.tenant({ monthlyQuota: 1 }), `r${r}`, acknowledged)
    expect(refused).toBeGreaterThan(0)
    expect(await listedValues(a)).toEqual(new Set(acknowledged))
  })

  it('keeps them apart while they all wait for a lock another process holds', async () => {
    const s = await buildSqlite({ busyBudgetMs: 5000 })
    h = s
    const a = await h.tenant({ rateLimit: 100_000 })
    const b = await h.tenant({ monthlyQuota: 1 })
    const other = new Database(s.file)
    other.exec('BEGIN IMMEDIATE')
    const acknowledged: string[] = []
    // Every transaction of the round queues behind the lock; the lock goes away while they wait.
    const txs = vi.spyOn(h.store.db, 'tx')
    const inFlight = round(a, b, 'locked', acknowledged)
    // Released once the list adds and the checks (18 requests, a transaction each) all wait.
    const queued = await eventually(() => txs.mock.calls.length >= 18, 5000, 5)
    expect(queued, `${txs.mock.calls.length} transactions waiting after 5 s`).toBe(true)
    other.exec('ROLLBACK')
    other.close()
    // B sent six checks and two scores for its one unit.
    expect(await inFlight).toBe(7)
    expect(await listedValues(a)).toEqual(new Set(acknowledged))
    expect(acknowledged).toHaveLength(12)
    const used = await h.store.db.get<{ used: number }>('SELECT used FROM usage WHERE tenant_id = ?', [
      b.tenantId,
    ])
    expect(used?.used).toBe(1)
  })
})

/** The WAL-index header (in the -shm file, native byte order): frames in the WAL and frames copied back. */
function walIndex(file: string): { mxFrame: number; nBackfill: number } {
  const shm = readFileSync(`${file}-shm`).subarray(0, 136)
  const le = endianness() === 'LE'
  const u32 = (at: number) => (le ? shm.readUInt32LE(at) : shm.readUInt32BE(at))
  return { mxFrame: u32(16), nBackfill: u32(96) }
}

describe('SQLite executor: WAL checkpoint', () => {
  it('never checkpoints in COMMIT; a worker copies the WAL back into the database file without any request', async () => {
    h = await build()
    const file = join(h.dir, 'verdict.db')
    expect(await h.store.db.get('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 0 })
    const t = await h.tenant({ rateLimit: 100_000 })
    for (let i = 0; i < 20; i++) {
      const rows = Array.from({ length: 25 }, (_, j) => ({
        event: 'signup',
        user_id: `u-${i}-${j}`,
        email: `person.${i}.${j}@example.com`,
        ip: `73.162.${i}.${j + 1}`,
        device_id: `fp-${i}-${j}`,
      }))
      const res = await post('/v1/batch/score', t, { rows })
      expect(res.statusCode, res.body).toBe(200)
    }
    const pages = await h.store.db.get<{ page_count: number }>('PRAGMA page_count')
    const size = await h.store.db.get<{ page_size: number }>('PRAGMA page_size')
    const complete = Number(pages?.page_count) * Number(size?.page_size)
    expect(walIndex(file).mxFrame).toBeGreaterThan(0)
    // No request from here on: only the checkpoint worker can move the frames.
    const backfilled = await eventually(() => {
      const w = walIndex(file)
      return w.nBackfill === w.mxFrame && statSync(file).size >= complete
    }, 20_000)
    expect(backfilled, JSON.stringify({ ...walIndex(file), size: statSync(file).size, complete })).toBe(true)
  })
})
