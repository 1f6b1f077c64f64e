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
}

/**
 * A unit of work: a generator that yields statements and receives their results. It cannot await
 * anything else, so SQLite runs it synchronously from BEGIN to COMMIT (no other request's statement can
 * slip into the transaction, by construction) while PostgreSQL sends each statement on one connection.
 */
export type Work<T> = Generator<Op, T, unknown>

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
export function runSync<T>(work: Work<T>, exec: (op: Op) => unknown): T {
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

/** Drives a unit of work with an asynchronous executor (one statement at a time, in order). */
export async function runAsync<T>(work: Work<T>, exec: (op: Op) => Promise<unknown>): Promise<T> {
  let next = work.next()
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
