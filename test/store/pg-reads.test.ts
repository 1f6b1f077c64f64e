import { afterEach, describe, expect, it } from 'vitest'
import { q, together, type Work } from '../../src/store/engine/db.js'
import { MAX_PARTS } from '../../src/store/engine/pg-reads.js'
import type { Store } from '../../src/store/index.js'
import { openTestStore } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/**
 * The message a read went out in: its backend, and the implicit transaction that lasts from one Sync to
 * the next (every statement of one message shares its id; statements sent apart do not).
 */
const WHICH = `SELECT ? || '' AS v, pg_backend_pid() AS pid, txid_current()::text AS ts`

/** Reads of several units sent together (`Db.read`): each unit gets its own answer, as alone. */
describe.each(['sqlite', 'postgres'] as const)('reads sent together on %s', (engine) => {
  let store: Store
  let cleanup: () => Promise<void>
  afterEach(async () => {
    await cleanup?.()
  })

  async function open() {
    const s = await openTestStore(engine)
    store = s.store
    cleanup = s.cleanup
  }

  /** Two reads, the second built from the first's answer. */
  function* twoSteps(n: number): Work<string> {
    const a = yield* q.get<{ v: number }>('SELECT CAST(? AS INTEGER) * 2 AS v', [n])
    const b = yield* q.get<{ v: number }>('SELECT CAST(? AS INTEGER) + 1 AS v', [Number(a!.v)])
    return `${n}:${Number(b!.v)}`
  }

  it.skipIf(engine === 'postgres' && !hasPg)('gives every unit its own results, step by step', async () => {
    await open()
    const ns = Array.from({ length: 45 }, (_, i) => i)
    const out = await Promise.all(ns.map((n) => store.db.read(() => twoSteps(n))))
    expect(out).toEqual(ns.map((n) => `${n}:${n * 2 + 1}`))
    // Units that read several statements `together` get theirs as an array, beside single reads.
    const pair = (n: number) =>
      together(
        q.get<{ v: number }>('SELECT CAST(? AS INTEGER) AS v', [n]),
        q.all<{ v: number }>('SELECT CAST(? AS INTEGER) AS v UNION ALL SELECT CAST(? AS INTEGER)', [n, -n]),
      )
    const mixed = await Promise.all([
      store.db.read(() => pair(3)),
      store.db.read(() => twoSteps(4)),
      store.db.read(() => pair(5)),
    ])
    const plain = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(plain) : v && typeof v === 'object' ? { v: Number((v as { v: number }).v) } : v
    expect(plain(mixed)).toEqual([
      [{ v: 3 }, [{ v: 3 }, { v: -3 }]],
      '4:9',
      [{ v: 5 }, [{ v: 5 }, { v: -5 }]],
    ])
  })

  it.skipIf(engine === 'postgres' && !hasPg)('fails only the unit whose statement failed', async () => {
    await open()
    const divide = (d: number) =>
      store.db.read(() => q.get<{ v: number }>('SELECT 10 / CAST(? AS INTEGER) AS v', [d]))
    const results = await Promise.allSettled([divide(5), divide(0), divide(2), divide(1)])
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      engine === 'postgres' ? 'rejected' : 'fulfilled',
      'fulfilled',
      'fulfilled',
    ])
    expect(
      results
        .filter((r) => r.status === 'fulfilled')
        .map((r) => Number((r.value as { v: number } | undefined)?.v ?? -1)),
    ).toEqual(engine === 'postgres' ? [2, 5, 10] : [2, -1, 5, 10])
    // A unit that catches its failure goes on, as it would alone.
    function* caught(): Work<string> {
      try {
        yield* q.get('SELECT 10 / CAST(? AS INTEGER) AS v', [0])
        return 'no failure'
      } catch {
        const r = yield* q.get<{ v: string }>("SELECT 'after' AS v")
        return r!.v
      }
    }
    if (engine === 'postgres') {
      const [a, b] = await Promise.all([store.db.read(caught), divide(10)])
      expect(a).toBe('after')
      expect(Number(b!.v)).toBe(1)
    }
  })

  it.skipIf(engine !== 'postgres' || !hasPg)(
    'sends the reads of one turn in one message, up to the part limit',
    async () => {
      await open()
      const which = (v: string) =>
        store.db.read(() => q.get<{ v: string; pid: number; ts: string }>(WHICH, [v]))
      const messages = (rows: { pid: number; ts: string }[]) =>
        new Set(rows.map((r) => `${r.pid} ${r.ts}`)).size
      const eight = (await Promise.all(Array.from({ length: 8 }, (_, i) => which(`a${i}`)))) as {
        v: string
        pid: number
        ts: string
      }[]
      expect(eight.map((r) => r.v)).toEqual(Array.from({ length: 8 }, (_, i) => `a${i}`))
      expect(messages(eight)).toBe(1)
      // Past the limit: MAX_PARTS reads in one message, the rest in another.
      const many = (await Promise.all(Array.from({ length: MAX_PARTS + 5 }, (_, i) => which(`b${i}`)))) as {
        pid: number
        ts: string
      }[]
      expect(messages(many)).toBe(2)
      // Reads of different turns go out apart.
      const alone: { pid: number; ts: string }[] = []
      for (let i = 0; i < 3; i++) alone.push((await which(`c${i}`)) as { pid: number; ts: string })
      expect(messages(alone)).toBe(3)
    },
  )
})
