import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { GroupWriter, type Job } from '../../src/services/runtime/group-writer.js'
import { q } from '../../src/store/engine/db.js'
import { openStore } from '../../src/store/index.js'
import { eventually } from '../helpers/app.js'
import { createDatabase, pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const GATE = 4242

/** Whether a session waits for the gate (the job inside its group transaction). */
async function waiting(client: pg.Client): Promise<boolean> {
  const r = await client.query(
    "SELECT COUNT(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1",
    [GATE],
  )
  return r.rows[0].n === 1
}

let cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const fn of cleanups.reverse()) await fn()
  cleanups = []
})

/** A writer on a fresh schema, a second connection that holds the gate, and jobs that record their order. */
async function setup(parallel?: number, stallMs?: number) {
  const { url, schema, drop } = await createDatabase()
  const store = await openStore({ kind: 'postgres', url }, { pgSchema: schema })
  const holder = new pg.Client({ connectionString: url })
  await holder.connect()
  cleanups.push(
    drop,
    () => store.close(),
    () => holder.end(),
  )
  const writer =
    parallel === undefined
      ? new GroupWriter(store.db, store.usage)
      : new GroupWriter(store.db, store.usage, 256, parallel, undefined, stallMs)
  const done: string[] = []
  const job = (name: string, wait = false): Job<string> =>
    function* () {
      // A job that waits inside its transaction until the test lets it go.
      if (wait) yield* q.get('SELECT pg_advisory_xact_lock(?::bigint) AS x', [GATE])
      else yield* q.get('SELECT 1 AS x')
      done.push(name)
      return name
    }
  await holder.query('SELECT pg_advisory_lock($1::bigint)', [GATE])
  const release = () => holder.query('SELECT pg_advisory_unlock($1::bigint)', [GATE])
  return { writer, holder, done, job, release }
}

describe.skipIf(!hasPg)('group writer on PostgreSQL: parallel groups, one entity at a time', () => {
  it('runs other entities’ jobs while a group waits, and an entity’s jobs in the order they came', async () => {
    const { writer, holder, done, job, release } = await setup()
    const a = writer.submit(job('A', true), ['ip:x'])
    expect(await eventually(() => waiting(holder))).toBe(true)
    // Another entity's job commits while A's group is still open (once A's group has stalled).
    expect(await writer.submit(job('B'), ['ip:y'])).toBe('B')
    // A job of A's entity waits for A, whatever comes after it; a job with no entity does not.
    const c = writer.submit(job('C'), ['ip:x', 'fp:1'])
    const d = writer.submit(job('D'), ['fp:1'])
    expect(await writer.submit(job('E'), [])).toBe('E')
    expect(done).toEqual(['B', 'E'])
    expect(writer.depth).toBe(2)
    await release()
    expect(await Promise.all([a, c, d])).toEqual(['A', 'C', 'D'])
    // D shares no entity with A, but it follows C, which does: it may not overtake C.
    expect(done).toEqual(['B', 'E', 'A', 'C', 'D'])
  })

  it('a group open for less than the stall time keeps the jobs behind it, as one group at a time does', async () => {
    const { writer, holder, done, job, release } = await setup(3, 60_000)
    const a = writer.submit(job('A', true), ['ip:x'])
    expect(await eventually(() => waiting(holder))).toBe(true)
    const b = writer.submit(job('B'), ['ip:y'])
    await holder.query('SELECT 1')
    await new Promise((r) => setTimeout(r, 100))
    expect(done).toEqual([])
    expect(writer.depth).toBe(1)
    await release()
    expect(await Promise.all([a, b])).toEqual(['A', 'B'])
  })

  it('with one group at a time (as on SQLite), a waiting group holds everything behind it', async () => {
    const { writer, holder, done, job, release } = await setup(1)
    const a = writer.submit(job('A', true), ['ip:x'])
    expect(await eventually(() => waiting(holder))).toBe(true)
    const b = writer.submit(job('B'), ['ip:y'])
    await holder.query('SELECT 1')
    expect(done).toEqual([])
    expect(writer.depth).toBe(1)
    await release()
    expect(await Promise.all([a, b])).toEqual(['A', 'B'])
  })
})

describe.skipIf(!hasPg)('group writer on PostgreSQL: jobs side by side', () => {
  it('runs a job beside the ones before it only when their keys are disjoint', async () => {
    const { url, schema, drop } = await createDatabase()
    const store = await openStore({ kind: 'postgres', url }, { pgSchema: schema })
    cleanups.push(drop, () => store.close())
    await store.db.exec('CREATE TABLE gw_rows (k TEXT NOT NULL)')
    const writer = new GroupWriter(store.db, store.usage)
    const insert = (k: string): Job<number> =>
      function* () {
        return yield* q.run('INSERT INTO gw_rows (k) VALUES (?)', [k])
      }
    const countOf = (k: string): Job<number> =>
      function* () {
        return Number((yield* q.get<{ n: number }>('SELECT COUNT(*) AS n FROM gw_rows WHERE k = ?', [k]))?.n)
      }
    /** Writes its own row, then counts `other`'s rows. */
    const insertThenCount = (k: string, other: string): Job<number> =>
      function* () {
        yield* q.run('INSERT INTO gw_rows (k) VALUES (?)', [k])
        return Number(
          (yield* q.get<{ n: number }>('SELECT COUNT(*) AS n FROM gw_rows WHERE k = ?', [other]))?.n,
        )
      }
    // One tick, one group. Beside it, the second job's write goes out while the first waits for its own
    // write's answer, so the first job's count (its second statement) already finds that row; run one
    // after the other, it would not. Sharing a key, the second job starts only once the first has finished.
    const [besideIt] = await Promise.all([
      writer.submit(insertThenCount('a', 'b'), [], ['x']),
      writer.submit(insert('b'), [], ['y']),
    ])
    expect(besideIt).toBe(1)
    const [notBeside] = await Promise.all([
      writer.submit(insertThenCount('c', 'd'), [], ['x']),
      writer.submit(insert('d'), [], ['x']),
    ])
    expect(notBeside).toBe(0)
    const [, after, alone] = await Promise.all([
      writer.submit(insert('e'), [], ['x']),
      writer.submit(countOf('e'), [], ['x']),
      writer.submit(countOf('a'), [], null),
    ])
    expect(after).toBe(1)
    expect(alone).toBe(1)
  })
})
