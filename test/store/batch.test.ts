import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { type BatchOp, none, type Op, q, together, type Work } from '../../src/store/engine/db.js'
import type { Store } from '../../src/store/index.js'
import { type Engine, openTestStore } from '../helpers/build.js'
import { pgAvailable, TEMPLATE_SCHEMA } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/** Drives a unit of work by hand, recording what it yields and answering from `answer`. */
function drive<T>(
  work: Work<T>,
  answer: (op: Op | BatchOp) => unknown,
): { yielded: (Op | BatchOp)[]; value: T } {
  const yielded: (Op | BatchOp)[] = []
  let step = work.next()
  while (!step.done) {
    if (step.value.kind === 'overlap') throw new Error('not driven here')
    yielded.push(step.value)
    step = work.next(answer(step.value))
  }
  return { yielded, value: step.value }
}

describe('together', () => {
  it('sends the next statement of every unfinished part in one batch, and hands each its own result', () => {
    function* two(a: string, b: string): Work<string> {
      const x = (yield* q.get<string>(a)) as string
      const y = (yield* q.get<string>(b)) as string
      return `${x}${y}`
    }
    const { yielded, value } = drive(
      together(
        two('a1', 'a2'),
        q.get<string>('b1'),
        none(7),
        together(q.get<string>('c1'), q.get<string>('d1')),
      ),
      (op) => (op.kind === 'batch' ? op.ops.map((o) => o.sql.toUpperCase()) : op.sql.toUpperCase()),
    )
    expect(yielded).toEqual([
      {
        kind: 'batch',
        ops: [
          { kind: 'get', sql: 'a1', params: [] },
          { kind: 'get', sql: 'b1', params: [] },
          { kind: 'get', sql: 'c1', params: [] },
          { kind: 'get', sql: 'd1', params: [] },
        ],
      },
      // Only one part is left: its statement goes out on its own.
      { kind: 'get', sql: 'a2', params: [] },
    ])
    expect(value).toEqual(['A1A2', 'B1', 7, ['C1', 'D1']])
  })

  it('yields nothing when every part is empty', () => {
    expect(drive(together(none(1), none('x')), () => undefined)).toEqual({ yielded: [], value: [1, 'x'] })
  })
})

describe.each<Engine>(['sqlite', 'postgres'])('a batch on %s', (engine) => {
  let store: Store
  let cleanup: () => Promise<void>
  afterEach(async () => {
    await cleanup?.()
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'answers each part as the statement alone would: rows, the first row, changed rows',
    async () => {
      const s = await openTestStore(engine)
      store = s.store
      cleanup = s.cleanup
      await store.db.exec('CREATE TABLE bt (k TEXT PRIMARY KEY, n BIGINT NOT NULL)')
      await store.db.tx(function* () {
        yield* q.run('INSERT INTO bt (k, n) VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2])
      })
      const out = await store.db.tx(() =>
        together(
          q.all<{ k: string; n: number }>('SELECT k, n FROM bt ORDER BY k DESC'),
          q.get<{ n: number }>('SELECT n FROM bt WHERE k = ?', ['a']),
          q.get<{ n: number }>('SELECT n FROM bt WHERE k = ?', ['none']),
          q.all('SELECT k FROM bt WHERE k = ?', ['none']),
          q.get<{ c: number }>('SELECT COUNT(*) AS c FROM bt'),
          q.run('INSERT INTO bt (k, n) VALUES (?, ?) ON CONFLICT (k) DO NOTHING', ['a', 9]),
        ),
      )
      const [rows, one, missing, empty, count, changed] = out
      expect(rows.map((r) => [r.k, Number(r.n)])).toEqual([
        ['b', 2],
        ['a', 1],
      ])
      expect(Number(one?.n)).toBe(1)
      expect(missing).toBeUndefined()
      expect(empty).toEqual([])
      expect(Number(count?.c)).toBe(2)
      expect(changed).toBe(0)
      const [added, updated] = await store.db.tx(() =>
        together(
          q.run('INSERT INTO bt (k, n) VALUES (?, ?)', ['c', 3]),
          // Each part sees the state before the batch: the update does not touch the row inserted beside it.
          q.run('UPDATE bt SET n = n + 1 WHERE k <> ?', ['c']),
        ),
      )
      expect([added, updated]).toEqual([1, 2])
      // A write read for its RETURNING rows (the idempotency claim's form), beside a read.
      const [claimed, skipped, seen] = await store.db.tx(() =>
        together(
          q.get<{ ok: number }>(
            'INSERT INTO bt (k, n) VALUES (?, ?) ON CONFLICT (k) DO NOTHING RETURNING 1 AS ok',
            ['e', 5],
          ),
          q.get<{ ok: number }>('UPDATE bt SET n = 0 WHERE k = ? RETURNING 1 AS ok', ['none']),
          q.get<{ n: number }>('SELECT n FROM bt WHERE k = ?', ['c']),
        ),
      )
      expect(Number(claimed?.ok)).toBe(1)
      expect(skipped).toBeUndefined()
      expect(Number(seen?.n)).toBe(3)
      // A failed part fails the whole batch, and the transaction with it.
      await expect(
        store.db.tx(() =>
          together(
            q.run('INSERT INTO bt (k, n) VALUES (?, ?)', ['d', 4]),
            q.run('INSERT INTO bt (k, n) VALUES (?, ?)', ['a', 0]),
          ),
        ),
      ).rejects.toThrow()
      expect(await store.db.get('SELECT k FROM bt WHERE k = ?', ['d'])).toBeUndefined()
    },
  )
})

describe('a batch on postgres, with rows another transaction holds', () => {
  let cleanup: (() => Promise<void>) | undefined
  afterEach(async () => {
    await cleanup?.()
    cleanup = undefined
  })

  // The group's end relies on this (services/runtime/group-writer.ts): its meter and counter upserts are
  // one batch, and usage rows must be locked before counter rows in every transaction.
  it.skipIf(!hasPg)('locks the rows of its parts in the parts’ order', async () => {
    const s = await openTestStore('postgres')
    cleanup = s.cleanup
    const db = s.store.db
    await db.exec('CREATE TABLE bo_first (k TEXT PRIMARY KEY, n BIGINT NOT NULL)')
    await db.exec('CREATE TABLE bo_second (k TEXT PRIMARY KEY, n BIGINT NOT NULL)')
    await db.exec("INSERT INTO bo_first VALUES ('a', 0); INSERT INTO bo_second VALUES ('a', 0)")
    const client = async () => {
      const c = new pg.Client({ connectionString: s.pgUrl })
      await c.connect()
      await c.query(`SET search_path = ${TEMPLATE_SCHEMA}`)
      return c
    }
    const upsert = (table: string) =>
      q.run(`INSERT INTO ${table} (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET n = ${table}.n + 1`, [
        'a',
      ])
    /** Whether the batch held the first part's row while it waited for the second part's row. */
    const firstHeldWhileWaiting = async (order: 'first, second' | 'second, first') => {
      const holder = await client()
      const probe = await client()
      try {
        await holder.query('BEGIN')
        await holder.query("UPDATE bo_second SET n = n + 1 WHERE k = 'a'")
        const parts = order === 'first, second' ? ['bo_first', 'bo_second'] : ['bo_second', 'bo_first']
        let settled = false
        const batch = db
          .tx(() => together(...parts.map(upsert)))
          .finally(() => {
            settled = true
          })
        // The batch waits for bo_second's row: poll until it does (no fixed sleep).
        while (!settled) {
          const r = await probe.query(
            "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
          if (r.rows[0].n > 0) break
        }
        expect(settled).toBe(false)
        let held = false
        await probe.query("SELECT k FROM bo_first WHERE k = 'a' FOR UPDATE NOWAIT").catch(() => {
          held = true
        })
        await holder.query('ROLLBACK')
        expect(await batch).toEqual([1, 1])
        return held
      } finally {
        await holder.end()
        await probe.end()
      }
    }
    expect(await firstHeldWhileWaiting('first, second')).toBe(true)
    expect(await firstHeldWhileWaiting('second, first')).toBe(false)
  })
})
