import type { Db, Dialect } from '../engine/db.js'
import { MIGRATIONS } from './migration-list.js'

/**
 * Schema migrations. One text serves both engines; the few spots where the dialects differ are
 * written as tokens replaced per dialect.
 */
const TOKENS: Record<Dialect, Record<string, string>> = {
  sqlite: {
    '{{SERIAL_PK}}': 'INTEGER PRIMARY KEY AUTOINCREMENT',
    '{{REAL}}': 'REAL',
    '{{WITHOUT_ROWID}}': 'WITHOUT ROWID',
    '{{HOUR}}': '(created_ms / 3600000) * 3600000',
    '{{DAY}}': '(created_ms / 86400000) * 86400000',
  },
  postgres: {
    '{{SERIAL_PK}}': 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
    '{{REAL}}': 'DOUBLE PRECISION',
    '{{WITHOUT_ROWID}}': '',
    '{{HOUR}}': '(created_ms / 3600000) * 3600000',
    '{{DAY}}': '(created_ms / 86400000) * 86400000',
  },
}

function render(sql: string, dialect: Dialect): string {
  let out = sql
  for (const [token, value] of Object.entries(TOKENS[dialect])) out = out.replaceAll(token, value)
  return out
}

const isBusy = (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY'

/** How long a start-up waits for another process's migration (a partition copy can take minutes). */
const BUSY_DEADLINE_MS = 5 * 60_000

/**
 * Runs `fn` again while SQLite answers busy: processes starting at once race for the write lock, and
 * the connection's busy_timeout is short (it is tuned for request traffic), so a start-up on a loaded
 * machine must wait for another's migration by retrying, with a pause, until a deadline.
 */
async function retryBusy(fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + BUSY_DEADLINE_MS
  for (;;) {
    try {
      return await fn()
    } catch (err) {
      if (!isBusy(err) || Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 25))
    }
  }
}

/**
 * Applies the missing migrations (up to `until`, for tests that build an older schema). Safe when
 * several processes start at once: each migration runs in one transaction that records its version
 * *first*, so when another process applied it meanwhile the insert fails on the version key, the
 * transaction rolls back and the migration counts as done. On SQLite the transaction is immediate
 * (takes the write lock at BEGIN, waiting for another writer); on PostgreSQL callers also hold the
 * start-up advisory lock (services/runtime/startup-lock.ts). A migration marked `only` for the other engine
 * records its version and runs nothing.
 */
export async function migrate(db: Db, options: { until?: number } = {}): Promise<void> {
  await retryBusy(() =>
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)',
    ),
  )
  const applied = async () =>
    new Set(
      (await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) =>
        Number(r.version),
      ),
    )
  const done = await applied()
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue
    if (options.until !== undefined && m.version > options.until) break
    const begin = db.dialect === 'sqlite' ? 'BEGIN IMMEDIATE' : 'BEGIN'
    const now = Date.now()
    const sql =
      m.only === undefined || m.only === db.dialect
        ? render(m.sql, db.dialect).replaceAll('{{NOW_MS}}', String(now))
        : ''
    const script = `${begin};\nINSERT INTO schema_migrations (version, applied_ms) VALUES (${m.version}, ${now});\n${sql}\nCOMMIT;`
    try {
      await retryBusy(async () => {
        try {
          await db.exec(script)
        } catch (err) {
          await db.exec('ROLLBACK').catch(() => {})
          throw err
        }
      })
    } catch (err) {
      if (!(await applied()).has(m.version))
        throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`)
    }
  }
}
