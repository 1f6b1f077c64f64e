import { afterEach, describe, expect, it } from 'vitest'
import { blind as blindly, type Op, q, type Work } from '../../src/store/engine/db.js'
import type { Store } from '../../src/store/index.js'
import { openTestStore } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/** The PostgreSQL executor's own statement objects (store/engine/pg-statement.ts), as callers see them. */
describe.skipIf(!hasPg)('statements on postgres', () => {
  let store: Store
  let cleanup: () => Promise<void>
  afterEach(async () => {
    await cleanup?.()
  })

  async function open() {
    const s = await openTestStore('postgres')
    store = s.store
    cleanup = s.cleanup
    await store.db.exec('CREATE TABLE st (k TEXT PRIMARY KEY, n BIGINT, v NUMERIC, j JSONB, b BOOLEAN)')
  }

  it('reads rows as objects in column order, numbers as numbers, NULL as null', async () => {
    await open()
    expect(
      await store.db.run('INSERT INTO st (k, n, v, j, b) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)', [
        'a',
        1_700_000_000_000,
        '1.5',
        '{"x":[1,"y"]}',
        'true',
        'b',
        null,
        null,
        null,
        null,
      ]),
    ).toBe(2)
    const rows = await store.db.all<Record<string, unknown>>('SELECT k, n, v, j, b FROM st ORDER BY k')
    expect(rows).toEqual([
      { k: 'a', n: 1_700_000_000_000, v: 1.5, j: { x: [1, 'y'] }, b: true },
      { k: 'b', n: null, v: null, j: null, b: null },
    ])
    expect(Object.keys(rows[0]!)).toEqual(['k', 'n', 'v', 'j', 'b'])
    expect(await store.db.get('SELECT k FROM st WHERE k = ?', ['none'])).toBeUndefined()
    expect(await store.db.run('UPDATE st SET n = ? WHERE k <> ?', [2, 'none'])).toBe(2)
    expect(await store.db.run('DELETE FROM st WHERE k = ?', ['none'])).toBe(0)
  })

  it('rejects with the server error and keeps the connections usable', async () => {
    await open()
    await store.db.run('INSERT INTO st (k) VALUES (?)', ['a'])
    for (let i = 0; i < 3; i++)
      await expect(store.db.run('INSERT INTO st (k) VALUES (?)', ['a'])).rejects.toMatchObject({
        code: '23505',
      })
    await expect(store.db.get('SELECT k::int AS i FROM st WHERE k = ?', ['a'])).rejects.toMatchObject({
      code: '22P02',
    })
    // A failure inside a transaction rolls it back and leaves its connection fit for the next one.
    await expect(
      store.db.tx(function* () {
        yield* q.run('INSERT INTO st (k) VALUES (?)', ['c'])
        yield* q.run('INSERT INTO st (k) VALUES (?)', ['a'])
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await store.db.all('SELECT k FROM st ORDER BY k')).toEqual([{ k: 'a' }])
    const counted = await store.db.tx(function* () {
      return yield* q.get<{ c: number }>('SELECT COUNT(*) AS c FROM st')
    })
    expect(counted).toEqual({ c: 1 })
  })

  it('reads the columns a statement has now when its table changed since it was last run', async () => {
    await open()
    await store.db.run('INSERT INTO st (k, n) VALUES (?, ?)', ['a', 1])
    const sql = 'SELECT * FROM st WHERE k = ?'
    expect(await store.db.get(sql, ['a'])).toEqual({ k: 'a', n: 1, v: null, j: null, b: null })
    await store.db.exec('ALTER TABLE st DROP COLUMN j, DROP COLUMN b, ADD COLUMN t TEXT')
    // Connections that prepared the statement before refuse it (its result type changed); the new
    // columns must come from whichever connection prepares it again, not from the shape seen before.
    let row: unknown
    for (let i = 0; i < 20 && row === undefined; i++)
      row = await store.db.get(sql, ['a']).catch(() => undefined)
    expect(row).toEqual({ k: 'a', n: 1, v: null, t: null })
  })
  /** A statement whose result the work does not read: it goes out with BEGIN and the next statement. */
  function* blind(sql: string, params: Op['params'] = []): Work<void> {
    yield { kind: 'get', sql, params, blind: true }
  }

  it('runs BEGIN, a blind statement and the next one in one message, in order', async () => {
    await open()
    await store.db.run('INSERT INTO st (k, n) VALUES (?, ?)', ['a', 1])
    // The next statement reads what the blind one wrote: they ran in order, in one transaction.
    const seen = await store.db.tx(function* () {
      yield* blind('UPDATE st SET n = n + ? WHERE k = ?', [41, 'a'])
      const row = yield* q.get<{ n: number }>('SELECT n FROM st WHERE k = ?', ['a'])
      yield* q.run('INSERT INTO st (k, n) VALUES (?, ?)', ['b', row!.n])
      return row!.n
    })
    expect(seen).toBe(42)
    expect(await store.db.all('SELECT k, n FROM st ORDER BY k')).toEqual([
      { k: 'a', n: 42 },
      { k: 'b', n: 42 },
    ])
    // A work of one blind statement returns what the work returns.
    expect(
      await store.db.tx(function* () {
        yield* blind('UPDATE st SET n = 0 WHERE k = ?', ['b'])
        return 'done'
      }),
    ).toBe('done')
    expect(await store.db.get('SELECT n FROM st WHERE k = ?', ['b'])).toEqual({ n: 0 })
  })

  it('fails the work where it waits when a statement of the message fails, and rolls it back', async () => {
    await open()
    await store.db.run('INSERT INTO st (k, n) VALUES (?, ?)', ['a', 1])
    // A text no connection has prepared yet: the failed blind statement makes the server skip its Parse.
    const next = 'SELECT n + ? AS m FROM st WHERE k = ?'
    let caught: unknown
    await expect(
      store.db.tx(function* () {
        try {
          yield* blind('UPDATE st SET n = k::int WHERE k = ?', ['a'])
          yield* q.get(next, [1, 'a'])
        } catch (err) {
          caught = err
          throw err
        }
      }),
    ).rejects.toMatchObject({ code: '22P02' })
    expect(caught).toMatchObject({ code: '22P02' })
    // The second statement, skipped with its Parse, is prepared afresh where it is used next (the pool
    // hands back the connection just released); the failed transaction left nothing behind.
    for (let i = 0; i < 12; i++) {
      const r = await store.db.tx(function* () {
        yield* blind('UPDATE st SET n = n WHERE k = ?', ['a'])
        return yield* q.get<{ m: number }>(next, [i, 'a'])
      })
      expect(r).toEqual({ m: 1 + i })
    }
    // Both failing together: the first failure is the one reported.
    await expect(
      store.db.tx(function* () {
        yield* blind('INSERT INTO st (k) VALUES (?)', ['a'])
        yield* q.get('SELECT k::int AS i FROM st WHERE k = ?', ['a'])
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await store.db.all('SELECT k, n FROM st ORDER BY k')).toEqual([{ k: 'a', n: 1 }])
  })

  it('holds blind statements for the next read or for COMMIT, and fails the transaction where they fail', async () => {
    await open()
    const insert = (k: string) => q.run('INSERT INTO st (k, n) VALUES (?, ?)', [k, 1])
    // The work ends with blind writes: they go out with COMMIT, and are committed.
    expect(
      await store.db.tx(function* () {
        yield* blindly(insert('a'))
        yield* blindly(insert('b'))
        return 'done'
      }),
    ).toBe('done')
    expect(await store.db.all('SELECT k FROM st ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }])
    // A blind write goes out before the read that follows it, in one message: the read sees it.
    expect(
      await store.db.tx(function* () {
        yield* blindly(insert('c'))
        return yield* q.get<{ n: number }>('SELECT COUNT(*) AS n FROM st')
      }),
    ).toEqual({ n: 3 })
    // One that fails is reported where the work next waits for a result, and nothing is committed.
    let where = ''
    await expect(
      store.db.tx(function* () {
        yield* insert('d')
        yield* blindly(insert('a'))
        where = 'after the blind write'
        try {
          yield* q.get('SELECT 1 AS one')
        } catch (err) {
          where = 'at the read'
          throw err
        }
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(where).toBe('at the read')
    // With COMMIT, after the work has returned: the transaction fails, nothing is committed.
    await expect(
      store.db.tx(function* () {
        yield* insert('e')
        yield* blindly(insert('a'))
        return 'returned'
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await store.db.all('SELECT k FROM st ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }, { k: 'c' }])
  })
})
