import { afterEach, describe, expect, it } from 'vitest'
import { q, type Work } from '../../src/store/engine/db.js'
import { MAX_SIDE_BY_SIDE, overlapped } from '../../src/store/engine/overlap.js'
import type { Store } from '../../src/store/index.js'
import { openTestStore } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

interface Item {
  k: string
  keys: string[] | null
}

/** Units of work side by side (store/engine/overlap.ts) on both engines, as a transaction sees them. */
describe.each(['sqlite', 'postgres'] as const)('side-by-side units of work on %s', (engine) => {
  let store: Store
  let cleanup: () => Promise<void>
  afterEach(async () => {
    await cleanup?.()
  })

  async function open() {
    const s = await openTestStore(engine)
    store = s.store
    cleanup = s.cleanup
    await store.db.exec('CREATE TABLE sx (k TEXT NOT NULL, n INTEGER NOT NULL)')
  }

  /** Inserts its row, then counts the rows of its own key: what the loop would give, side by side or not. */
  function* own(item: Item): Work<string> {
    yield* q.run('INSERT INTO sx (k, n) VALUES (?, ?)', [item.k, 1])
    const r = yield* q.get<{ c: number }>('SELECT COUNT(*) AS c FROM sx WHERE k = ?', [item.k])
    return `${item.k}:${Number(r!.c)}`
  }

  it.skipIf(engine === 'postgres' && !hasPg)('gives each item its own results, in item order', async () => {
    await open()
    // Items of one key follow each other; the others run beside them (on PostgreSQL).
    const items: Item[] = Array.from({ length: 30 }, (_, i) => ({ k: `k${i % 4}`, keys: [`k${i % 4}`] }))
    items.push({ k: 'k0', keys: null })
    const out = await store.db.tx(() => overlapped(items, (i) => i.keys, own))
    const seen = new Map<string, number>()
    const expected = items.map((i) => {
      const n = (seen.get(i.k) ?? 0) + 1
      seen.set(i.k, n)
      return `${i.k}:${n}`
    })
    expect(out).toEqual(expected)
    // And a side-by-side group inside an item of another (a batch inside a group).
    const nested = await store.db.tx(() =>
      overlapped(
        [1, 2, 3],
        (n) => [`outer${n}`],
        (n) =>
          overlapped(
            Array.from({ length: 12 }, (_, i) => ({ k: `n${n}-${i % 3}`, keys: [`n${n}-${i % 3}`] })),
            (i) => i.keys,
            own,
          ),
      ),
    )
    expect(nested.map((r) => r.at(-1))).toEqual(['n1-2:4', 'n2-2:4', 'n3-2:4'])
    expect(await store.db.get('SELECT COUNT(*) AS c FROM sx')).toEqual({ c: 31 + 36 })
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'fails the whole transaction when one item’s statement fails, and leaves the connection fit',
    async () => {
      await open()
      await store.db.exec('CREATE UNIQUE INDEX sx_k ON sx (k)')
      // Texts no connection has prepared yet, first sent after the failing statement.
      const later = (i: number) => `SELECT COUNT(*) + ${i} AS c FROM sx WHERE k <> ?`
      const items = Array.from({ length: 2 * MAX_SIDE_BY_SIDE }, (_, i) => i)
      await expect(
        store.db.tx(() =>
          overlapped(
            items,
            (i) => [`i${i}`],
            function* (i): Work<number> {
              yield* q.run('INSERT INTO sx (k, n) VALUES (?, ?)', [`i${i}`, i])
              // Item 0's second statement collides with its own row; the others' go out behind it.
              if (i === 0) yield* q.run('INSERT INTO sx (k, n) VALUES (?, ?)', ['i0', 0])
              const r = yield* q.get<{ c: number }>(later(i), ['none'])
              return Number(r!.c)
            },
          ),
        ),
      ).rejects.toMatchObject({ code: engine === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_UNIQUE' })
      expect(await store.db.get('SELECT COUNT(*) AS c FROM sx')).toEqual({ c: 0 })
      // Every text is prepared afresh where it was skipped (the pool hands back the same connection).
      for (let round = 0; round < 2; round++) {
        const counts = await store.db.tx(() =>
          overlapped(
            items,
            (i) => [`i${i}`],
            function* (i): Work<number> {
              const r = yield* q.get<{ c: number }>(later(i), ['none'])
              return Number(r!.c)
            },
          ),
        )
        expect(counts).toEqual(items)
      }
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'fails the whole transaction when an item throws between statements',
    async () => {
      await open()
      const boom = new Error('boom')
      await expect(
        store.db.tx(() =>
          overlapped(
            [0, 1, 2, 3],
            (i) => [`i${i}`],
            function* (i): Work<number> {
              yield* q.run('INSERT INTO sx (k, n) VALUES (?, ?)', [`i${i}`, i])
              if (i === 1) throw boom
              yield* q.run('UPDATE sx SET n = n + 1 WHERE k = ?', [`i${i}`])
              return i
            },
          ),
        ),
      ).rejects.toBe(boom)
      expect(await store.db.get('SELECT COUNT(*) AS c FROM sx')).toEqual({ c: 0 })
      const items: Item[] = [
        { k: 'a', keys: ['a'] },
        { k: 'b', keys: ['b'] },
      ]
      expect(await store.db.tx(() => overlapped(items, (i) => i.keys, own))).toEqual(['a:1', 'b:1'])
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'starts a later item of other keys beside a running one, never past an item of its keys or one alone',
    async () => {
      await open()
      await store.db.exec(
        engine === 'postgres'
          ? 'CREATE TABLE sq (seq BIGSERIAL PRIMARY KEY, label TEXT NOT NULL)'
          : 'CREATE TABLE sq (seq INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL)',
      )
      /** Writes a row on starting and one on finishing, in the order the server runs them. */
      function* mark(item: Item): Work<string> {
        yield* q.run('INSERT INTO sq (label) VALUES (?)', [`${item.k} start`])
        yield* own(item)
        yield* q.run('INSERT INTO sq (label) VALUES (?)', [`${item.k} end`])
        return item.k
      }
      const order = async (items: Item[]) => {
        await store.db.run('DELETE FROM sq')
        expect(await store.db.tx(() => overlapped(items, (i) => i.keys, mark))).toEqual(items.map((i) => i.k))
        const rows = await store.db.all<{ label: string }>('SELECT label FROM sq ORDER BY seq')
        return rows.map((r) => r.label)
      }
      // b waits for a (both of key 1); c (key 2) need not wait behind b.
      const held = await order([
        { k: 'a', keys: ['1'] },
        { k: 'b', keys: ['1'] },
        { k: 'c', keys: ['2'] },
      ])
      expect(held.indexOf('b start')).toBeGreaterThan(held.indexOf('a end'))
      if (engine === 'postgres') expect(held.indexOf('c start')).toBeLessThan(held.indexOf('b start'))
      else expect(held).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end'])
      // d shares key 2 with c, which waits behind b: d waits for c, though no running item holds key 2.
      const chained = await order([
        { k: 'a', keys: ['1'] },
        { k: 'b', keys: ['1', '2'] },
        { k: 'd', keys: ['2'] },
        { k: 'e', keys: ['3'] },
      ])
      expect(chained.indexOf('d start')).toBeGreaterThan(chained.indexOf('b end'))
      if (engine === 'postgres') expect(chained.indexOf('e start')).toBeLessThan(chained.indexOf('a end'))
      // An item alone waits for everything before it, and nothing after it starts before it ends.
      const alone = await order([
        { k: 'a', keys: ['1'] },
        { k: 'n', keys: null },
        { k: 'c', keys: ['2'] },
      ])
      expect(alone).toEqual(['a start', 'a end', 'n start', 'n end', 'c start', 'c end'])
    },
  )
})
