/**
 * The SQL executor both storage engines implement. Queries are written once with `?` placeholders
 * in the SQL both dialects accept; each engine prepares a statement text once and reuses it.
 */
export type Param = string | number | null
export type Dialect = 'sqlite' | 'postgres'

export interface Sql {
  all<T>(sql: string, params?: readonly Param[]): Promise<T[]>
  get<T>(sql: string, params?: readonly Param[]): Promise<T | undefined>
  /** Returns the number of rows the statement changed. */
  run(sql: string, params?: readonly Param[]): Promise<number>
}

export interface Db extends Sql {
  readonly dialect: Dialect
  /** Runs `fn` in one transaction; everything it does commits together or not at all. */
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T>
  /** Runs a multi-statement script (schema changes). */
  exec(script: string): Promise<void>
  /** Returns storage to the operating system after deletions (erasure). */
  reclaim(tables: readonly string[]): Promise<void>
  ping(): Promise<boolean>
  close(): Promise<void>
}
