import { createHash } from 'node:crypto'
import pg from 'pg'
import type { Db, Param, Sql } from './db.js'

// COUNT(*) and BIGINT columns (millisecond times) fit in a double; read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v))
pg.types.setTypeParser(1700, (v) => Number(v))

interface Prepared {
  name: string
  text: string
}

/** Turns `?` placeholders into `$n` (our SQL never has `?` inside string literals). */
function toPg(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const
  private readonly pool: pg.Pool
  private readonly prepared = new Map<string, Prepared>()
  private readonly direct: Sql

  constructor(url: string, options: { schema?: string; max?: number } = {}) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    })
    this.pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it on next use.
    })
    this.direct = this.executor(this.pool)
  }

  /** Named statements make each connection parse and plan a query text once. */
  private q(sql: string): Prepared {
    let p = this.prepared.get(sql)
    if (!p) {
      p = { name: `v_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`, text: toPg(sql) }
      this.prepared.set(sql, p)
    }
    return p
  }

  private executor(client: pg.Pool | pg.PoolClient): Sql {
    return {
      all: async <T>(sql: string, params: readonly Param[] = []) => {
        const r = await client.query({ ...this.q(sql), values: params as Param[] })
        return r.rows as T[]
      },
      get: async <T>(sql: string, params: readonly Param[] = []) => {
        const r = await client.query({ ...this.q(sql), values: params as Param[] })
        return r.rows[0] as T | undefined
      },
      run: async (sql: string, params: readonly Param[] = []) => {
        const r = await client.query({ ...this.q(sql), values: params as Param[] })
        return r.rowCount ?? 0
      },
    }
  }

  all<T>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.direct.all<T>(sql, params)
  }
  get<T>(sql: string, params?: readonly Param[]): Promise<T | undefined> {
    return this.direct.get<T>(sql, params)
  }
  run(sql: string, params?: readonly Param[]): Promise<number> {
    return this.direct.run(sql, params)
  }

  async tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    try {
      await client.query('BEGIN')
      const result = await fn(this.executor(client))
      await client.query('COMMIT')
      return result
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      client.release()
    }
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script)
  }

  /** Dead tuples of deleted rows are cleared by VACUUM; WAL segments and backups are outside our reach. */
  async reclaim(tables: readonly string[]): Promise<void> {
    for (const t of tables) {
      if (!/^[a-z_]+$/.test(t)) throw new Error(`bad table name ${t}`)
      await this.pool.query(`VACUUM ${t}`)
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1')
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
