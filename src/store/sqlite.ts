import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { Db, Param, Sql } from './db.js'

type Statement = Database.Statement<unknown[], unknown>

/**
 * better-sqlite3 is synchronous, so a transaction that awaits between statements would let other
 * requests' statements slip into it. A gate makes every statement outside the transaction wait
 * until it ends; statements inside it use the transaction's own executor.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const
  private readonly db: Database.Database
  private readonly statements = new Map<string, Statement>()
  private gate: Promise<void> | null = null
  private readonly direct: Sql

  constructor(readonly file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
    this.db = new Database(file)
    // auto_vacuum only takes effect before the first table exists; erasure relies on it.
    this.db.pragma('auto_vacuum = INCREMENTAL')
    this.db.pragma('journal_mode = WAL')
    // NORMAL in WAL mode: a committed transaction survives a process crash; a power loss may
    // roll back the last few commits but never corrupts the file.
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('foreign_keys = ON')
    this.db.pragma('busy_timeout = 5000')
    this.db.pragma('secure_delete = ON')
    // A 64 MB page cache keeps the hot parts of the event indexes in memory between group commits.
    this.db.pragma('cache_size = -65536')
    this.db.pragma('temp_store = MEMORY')
    this.direct = {
      all: async <T>(sql: string, params: readonly Param[] = []) => this.stmt(sql).all(...params) as T[],
      get: async <T>(sql: string, params: readonly Param[] = []) =>
        this.stmt(sql).get(...params) as T | undefined,
      run: async (sql: string, params: readonly Param[] = []) => this.stmt(sql).run(...params).changes,
    }
  }

  private stmt(sql: string): Statement {
    let s = this.statements.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }

  private async idle(): Promise<void> {
    while (this.gate) await this.gate
  }

  async all<T>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    if (this.gate) await this.idle()
    return this.stmt(sql).all(...params) as T[]
  }

  async get<T>(sql: string, params: readonly Param[] = []): Promise<T | undefined> {
    if (this.gate) await this.idle()
    return this.stmt(sql).get(...params) as T | undefined
  }

  async run(sql: string, params: readonly Param[] = []): Promise<number> {
    if (this.gate) await this.idle()
    return this.stmt(sql).run(...params).changes
  }

  async tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    while (this.gate) await this.gate
    let release!: () => void
    this.gate = new Promise<void>((resolve) => {
      release = resolve
    })
    this.db.exec('BEGIN IMMEDIATE')
    try {
      const result = await fn(this.direct)
      this.db.exec('COMMIT')
      return result
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK')
      throw err
    } finally {
      this.gate = null
      release()
    }
  }

  async exec(script: string): Promise<void> {
    if (this.gate) await this.idle()
    this.db.exec(script)
  }

  /**
   * Deleted rows are overwritten (secure_delete), the WAL is folded into the file and truncated, and
   * free pages are returned to the OS, so erased bytes leave the db, -wal and -shm files.
   * Returns whether the checkpoint completed (a long-running reader can hold it back).
   */
  async reclaim(): Promise<void> {
    if (this.gate) await this.idle()
    for (let attempt = 0; attempt < 5; attempt++) {
      const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      this.db.pragma('incremental_vacuum')
      const [again] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      if (!row?.busy && !again?.busy) return
      await new Promise((r) => setTimeout(r, 20 * (attempt + 1)))
    }
    throw new Error('WAL checkpoint blocked by a reader')
  }

  async ping(): Promise<boolean> {
    return this.db.prepare('SELECT 1 AS ok').get() !== undefined
  }

  async close(): Promise<void> {
    this.statements.clear()
    this.db.close()
  }
}
