/**
 * The SQL executor both storage engines implement. Queries are written once with `?` placeholders
 * in the SQL both dialects accept; each engine prepares a statement text once and reuses it.
 */
export type Param = string | number | null
export type Dialect = 'sqlite' | 'postgres'

/** One statement of a unit of work. */
export interface Op {
  kind: 'all' | 'get' | 'run'
  sql: string
  params: readonly Param[]
  /**
   * The work never reads this statement's result (on PostgreSQL it is given `undefined` at once): the
   * statement goes out in one message with the statements after it, up to the next one whose result the
   * work reads, or COMMIT (store/engine/postgres.ts). A failure is thrown into the work there.
   */
  blind?: true
}

/**
 * Statements that do not depend on each other, answered together (an array of their results, in order):
 * PostgreSQL sends them together on one connection (one round trip, store/engine/postgres.ts), SQLite
 * runs them one after another. None may read what another writes, and each table is written by one at most.
 */
export interface BatchOp {
  kind: 'batch'
  ops: readonly Op[]
  /** As `Op.blind`: each part is given `undefined`. */
  blind?: true
}

/**
 * Units of work to run in order, side by side whenever they touch nothing in common: each item names the
 * keys of what it reads and writes (`keysOf`; null for an item that must run alone).
 */
export interface OverlapPlan<T = unknown, R = unknown> {
  items: readonly T[]
  keysOf: (item: T) => readonly string[] | null
  work: (item: T) => Work<R>
}

/**
 * Units of work run side by side where they touch nothing in common, driven by the engine
 * (store/engine/overlap.ts `overlapped`); answered with their results in order.
 */
export interface OverlapOp {
  kind: 'overlap'
  plan: OverlapPlan
}

/** What a unit of work yields. */
export type Step = Op | BatchOp | OverlapOp

/**
 * A unit of work: a generator that yields statements and receives their results. It cannot await
 * anything else, so SQLite runs it synchronously from BEGIN to COMMIT (no other request's statement can
 * slip into the transaction, by construction) while PostgreSQL sends each statement on one connection.
 */
export type Work<T> = Generator<Step, T, unknown>

/** A part of `together` with nothing to do: returns `value` without a statement. */
// biome-ignore lint/correctness/useYield: an empty part of a batch makes no statement
export function* none<T = undefined>(value?: T): Work<T> {
  return value as T
}

type Results<T extends readonly unknown[]> = { [K in keyof T]: Work<T[K]> }

/**
 * Runs independent units of work side by side: at each step, the next statement of every unfinished
 * one goes out in one batch (BatchOp). The parts must not read what another part writes (each would
 * see the other's writes on SQLite and not on PostgreSQL), nor write the same table, and they must not
 * catch a failed statement: a failure fails the whole batch and leaves `together` at once.
 */
export function* together<T extends readonly unknown[]>(...works: Results<T>): Work<T> {
  const values: unknown[] = new Array(works.length)
  const steps = works.map((w) => w.next())
  for (;;) {
    const open: number[] = []
    steps.forEach((step, i) => {
      if (step.done) values[i] = step.value
      else open.push(i)
    })
    if (open.length === 0) return values as unknown as T
    if (open.length === 1) {
      // Nothing to batch with: the remaining part runs on its own.
      const i = open[0]!
      const step = steps[i]! as IteratorYieldResult<Step>
      steps[i] = works[i]!.next(yield step.value)
      continue
    }
    // A part may itself yield a batch (a nested `together`): its statements are spliced in.
    const ops: Op[] = []
    const spans: [number, number, boolean][] = []
    for (const i of open) {
      const op = (steps[i] as IteratorYieldResult<Step>).value
      if (op.kind === 'overlap') throw new Error('side-by-side units of work cannot be part of a batch')
      const from = ops.length
      if (op.kind === 'batch') ops.push(...op.ops)
      else ops.push(op)
      spans.push([from, ops.length, op.kind === 'batch'])
    }
    const results = (yield { kind: 'batch', ops }) as unknown[]
    open.forEach((i, k) => {
      const [from, to, nested] = spans[k]!
      steps[i] = works[i]!.next(nested ? results.slice(from, to) : results[from])
    })
  }
}

/**
 * Runs `work` with its statements marked blind (`Op.blind`): for writes whose results the work does not
 * read (it must not branch on them: on PostgreSQL each is `undefined`, a batch's an array of those).
 */
export function* blind<T>(work: Work<T>): Work<T> {
  let step = work.next()
  while (!step.done) {
    const op = step.value
    if (op.kind === 'overlap') throw new Error('side-by-side units of work cannot be blind')
    step = work.next(yield { ...op, blind: true })
  }
  return step.value
}

/** What a blind statement is answered with before it has run. */
export function blindAnswer(op: Op | BatchOp): unknown {
  return op.kind === 'batch' ? op.ops.map(() => undefined) : undefined
}

/** The statements a unit of work yields: `const rows = yield* q.all<Row>('SELECT …', [a])`. */
export const q = {
  *all<T>(sql: string, params: readonly Param[] = []): Work<T[]> {
    return (yield { kind: 'all', sql, params }) as T[]
  },
  *get<T>(sql: string, params: readonly Param[] = []): Work<T | undefined> {
    return (yield { kind: 'get', sql, params }) as T | undefined
  },
  /** Returns the number of rows the statement changed. */
  *run(sql: string, params: readonly Param[] = []): Work<number> {
    return (yield { kind: 'run', sql, params }) as number
  },
}

/** Storage cannot take the request now (locked by another process, restarting, disk full): retry later. */
export class StorageUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message)
  }
}

export interface DbStats {
  /** PostgreSQL: connections open, idle, and callers waiting for one. */
  pool?: { total: number; idle: number; waiting: number }
  /** SQLite: how many times a transaction found the write lock taken and tried again. */
  busyRetries?: number
}

export interface Db {
  readonly dialect: Dialect
  all<T>(sql: string, params?: readonly Param[]): Promise<T[]>
  get<T>(sql: string, params?: readonly Param[]): Promise<T | undefined>
  /** Returns the number of rows the statement changed. */
  run(sql: string, params?: readonly Param[]): Promise<number>
  /** Runs a unit of work in one transaction: everything it does commits together or not at all. */
  tx<T>(work: () => Work<T>): Promise<T>
  /**
   * Runs a unit of work of reads only, outside a transaction: each statement sees what is committed when
   * it starts. On PostgreSQL what it reads `together`, and the reads of all such units that arrive in the
   * same turn of the event loop (store/engine/pg-reads.ts), go out on one connection in one round trip.
   */
  read<T>(work: () => Work<T>): Promise<T>
  /** Runs a multi-statement script (schema changes). */
  exec(script: string): Promise<void>
  /** Returns storage to the operating system after deletions (erasure). */
  reclaim(tables: readonly string[]): Promise<void>
  /**
   * Whether `reclaim` already leaves no byte of a deleted row in the files. When it does not (PostgreSQL
   * only marks the space reusable), the tables need a `rewrite` before erased bytes are gone.
   */
  readonly reclaimErasesBytes: boolean
  /** Rewrites a table into new files, so the bytes of deleted rows are no longer in any of its files. */
  rewrite(table: string, lockTimeoutMs: number): Promise<void>
  /** Whether the database answers and can take a write now. */
  ping(): Promise<boolean>
  /** Figures for metrics: the pool (PostgreSQL) or the waits for another process's write lock (SQLite). */
  stats?(): DbStats
  close(): Promise<void>
}

/** Drives a unit of work with a synchronous executor; a failed statement is thrown into the work. */
export function runSync<T>(work: Work<T>, exec: (op: Step) => unknown): T {
  let next = work.next()
  while (!next.done) {
    let value: unknown
    try {
      value = exec(next.value)
    } catch (err) {
      next = work.throw(err)
      continue
    }
    next = work.next(value)
  }
  return next.value
}

/**
 * Drives a unit of work with an asynchronous executor (one statement at a time, in order). `first`: the
 * work's first step when the caller already took it (and answered it) itself.
 */
export async function runAsync<T>(
  work: Work<T>,
  exec: (op: Step) => Promise<unknown>,
  first?: ReturnType<Work<T>['next']>,
): Promise<T> {
  let next = first ?? work.next()
  while (!next.done) {
    let value: unknown
    try {
      value = await exec(next.value)
    } catch (err) {
      next = work.throw(err)
      continue
    }
    next = work.next(value)
  }
  return next.value
}
