import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { createPrivateFile, makePrivateDir } from '../../util/private-files.js'
import { Checkpointer } from './checkpointer.js'
import {
  type Db,
  type DbStats,
  type Op,
  type Param,
  runSync,
  type Step,
  StorageUnavailable,
  type Work,
} from './db.js'
import { inOrder } from './overlap.js'

type Statement = Database.Statement<unknown[], unknown>

export interface SqliteOptions {
  /**
   * How long one statement may wait, synchronously, for another process's lock. Kept short on the
   * server because the wait blocks the event loop; the transaction retry below waits asynchronously.
   */
  busyTimeoutMs?: number
  /** How long a transaction keeps retrying a locked database (asynchronously) before answering 503. */
  busyBudgetMs?: number
  /** Checkpoint the WAL from a worker thread instead of inside COMMIT (file databases only). */
  checkpointer?: boolean
}

/** Error codes that mean "the database cannot take this now", answered with 503 rather than 500. */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|FULL|IOERR|CANTOPEN|PROTOCOL)/

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test((err as { code?: string }).code ?? '')

function unavailable(err: unknown): Error {
  const code = (err as { code?: string }).code ?? ''
  return UNAVAILABLE.test(code) ? new StorageUnavailable(`database unavailable (${code})`) : (err as Error)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Opening settings, retried while another process holds the lock: switching to WAL needs the file to
 * itself for a moment, and SQLite answers SQLITE_BUSY at once there (no busy handler) when several
 * processes start together on a new file. Start-up only, so a short synchronous wait is fine.
 */
function atStart(apply: () => unknown, budgetMs = 10_000): void {
  const until = Date.now() + budgetMs
  for (;;) {
    try {
      apply()
      return
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > until) throw err
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25)
    }
  }
}

/**
 * better-sqlite3 is synchronous. A transaction runs its unit of work from BEGIN to COMMIT in one
 * synchronous call, so nothing else on the event loop can run between its statements: there is no gate
 * to get stuck and no statement of another request can end up inside it.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const
  private readonly db: Database.Database
  private readonly statements = new Map<string, Statement>()
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly rollback: Statement
  private readonly version: Statement
  private readonly busyBudgetMs: number
  private checkpointer: Checkpointer | null = null
  private busyRetries = 0
  private readonly useCheckpointer: boolean

  constructor(
    readonly file: string,
    options: SqliteOptions = {},
  ) {
    if (file !== ':memory:') {
      // The file holds password and key hashes: owner-only directory and files (WAL and -shm inherit).
      makePrivateDir(dirname(file))
      createPrivateFile(file)
    }
    this.db = new Database(file)
    // auto_vacuum only takes effect before the first table exists; erasure relies on it.
    atStart(() => this.db.pragma('auto_vacuum = INCREMENTAL'))
    atStart(() => this.db.pragma('journal_mode = WAL'))
    // NORMAL in WAL mode: a committed transaction survives a process crash; a power loss may
    // roll back the last few commits but never corrupts the file.
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('foreign_keys = ON')
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 20}`)
    this.db.pragma('secure_delete = ON')
    // A 64 MB page cache keeps the hot parts of the indexes in memory between group commits.
    this.db.pragma('cache_size = -65536')
    this.db.pragma('temp_store = MEMORY')
    // Reads map the file instead of copying pages through read(): large databases stay fast to search.
    this.db.pragma('mmap_size = 1073741824')
    // The WAL is reused after each checkpoint; this trims it back when a burst made it large.
    this.db.pragma('journal_size_limit = 67108864')
    this.useCheckpointer = (options.checkpointer ?? true) && file !== ':memory:'
    // COMMIT would otherwise run the checkpoint on the request thread every 1000 pages.
    if (this.useCheckpointer) this.db.pragma('wal_autocheckpoint = 0')
    this.busyBudgetMs = options.busyBudgetMs ?? 2000
    this.begin = this.db.prepare('BEGIN IMMEDIATE')
    this.commit = this.db.prepare('COMMIT')
    this.rollback = this.db.prepare('ROLLBACK')
    this.version = this.db.prepare('PRAGMA data_version').pluck()
  }

  private stmt(sql: string): Statement {
    let s = this.statements.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }

  private readonly execOp = (op: Op): unknown => {
    const s = this.stmt(op.sql)
    if (op.kind === 'all') return s.all(...op.params)
    if (op.kind === 'get') return s.get(...op.params)
    return s.run(...op.params).changes
  }

  /**
   * A batch runs its statements one after another (they are independent by contract), and side-by-side
   * units of work run one after another too (store/engine/overlap.ts): nothing waits on SQLite.
   */
  private readonly execStep = (op: Step): unknown => {
    if (op.kind === 'batch') return op.ops.map((o) => this.execOp(o))
    if (op.kind === 'overlap') return inOrder(op.plan, (w) => runSync(w, this.execStep))
    return this.execOp(op)
  }

  private direct<T>(op: Op): T {
    try {
      return this.execOp(op) as T
    } catch (err) {
      throw unavailable(err)
    }
  }

  async all<T>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    return this.direct<T[]>({ kind: 'all', sql, params })
  }

  async get<T>(sql: string, params: readonly Param[] = []): Promise<T | undefined> {
    return this.direct<T | undefined>({ kind: 'get', sql, params })
  }

  async run(sql: string, params: readonly Param[] = []): Promise<number> {
    return this.direct<number>({ kind: 'run', sql, params })
  }

  /**
   * BEGIN IMMEDIATE takes the write lock up front; while another process holds it we wait off the event
   * loop, for at most `budgetMs`. `body` runs synchronously right after BEGIN succeeds, in the same turn,
   * so nothing else can run while the transaction is open.
   */
  private async whileLocked<T>(budgetMs: number, body: () => T): Promise<T> {
    const deadline = Date.now() + budgetMs
    for (let attempt = 0; ; attempt++) {
      try {
        this.begin.run()
      } catch (err) {
        if (!isBusy(err) || Date.now() >= deadline) throw unavailable(err)
        this.busyRetries++
        await sleep(Math.min(5 * 2 ** attempt, 100))
        continue
      }
      return body()
    }
  }

  async read<T>(work: () => Work<T>): Promise<T> {
    try {
      return runSync(work(), this.execStep)
    } catch (err) {
      throw unavailable(err)
    }
  }

  tx<T>(work: () => Work<T>): Promise<T> {
    return this.whileLocked(this.busyBudgetMs, () => {
      try {
        const result = runSync(work(), this.execStep)
        this.commit.run()
        this.checkpointer ??= this.useCheckpointer ? new Checkpointer(this.file) : null
        return result
      } catch (err) {
        if (this.db.inTransaction) this.rollback.run()
        throw unavailable(err)
      }
    })
  }

  async exec(script: string): Promise<void> {
    this.db.exec(script)
  }

  /**
   * Deleted rows are overwritten (secure_delete), the WAL is folded into the file and truncated, and
   * free pages are returned to the OS, so erased bytes leave the db, -wal and -shm files.
   */
  async reclaim(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      this.db.pragma('incremental_vacuum')
      const [again] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      if (!row?.busy && !again?.busy) return
      await sleep(20 * (attempt + 1))
    }
    throw new Error('WAL checkpoint blocked by a reader')
  }

  /** secure_delete zeroes deleted content and `reclaim` folds the WAL in: nothing is left to rewrite. */
  readonly reclaimErasesBytes = true

  async rewrite(): Promise<void> {}

  /**
   * Reachable means readable and writable: another process holding the write lock makes it false. The
   * checkpoint worker also holds it for a moment now and then, so a short wait (off the event loop) is
   * allowed before the answer is no.
   */
  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1 AS ok').get()
      await this.whileLocked(Math.min(this.busyBudgetMs, 250), () => this.rollback.run())
      return true
    } catch {
      return false
    }
  }

  stats(): DbStats {
    return { busyRetries: this.busyRetries }
  }

  /** PRAGMA data_version: changes whenever another connection (another process) commits. */
  dataVersion(): number {
    return this.version.get() as number
  }

  async close(): Promise<void> {
    await this.checkpointer?.close()
    this.checkpointer = null
    this.statements.clear()
    this.db.close()
  }
}
