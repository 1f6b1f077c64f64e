import pg from 'pg'
import type { StorageTarget } from '../../store/index.js'

/**
 * Runs `fn` (opening the store, which migrates it, and creating the first tenant) while no other
 * process starting on the same database does the same. On PostgreSQL this is a session-level
 * advisory lock, held on a connection of its own for the whole of `fn` and keyed by database and
 * schema; a process that dies while holding it releases it with its connection. SQLite needs none:
 * each migration takes the write lock itself (see migrate) and the first tenant has a fixed id.
 */
export async function withStartupLock<T>(
  target: StorageTarget,
  fn: () => Promise<T>,
  options: { pgSchema?: string } = {},
): Promise<T> {
  if (target.kind !== 'postgres') return fn()
  const client = new pg.Client({
    connectionString: target.url,
    ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
  })
  client.on('error', () => {
    // A lost connection releases the lock; the work in `fn` reports its own errors.
  })
  await client.connect()
  try {
    await client.query(
      "SELECT pg_advisory_lock(hashtext('verdict:startup:' || current_database() || ':' || coalesce(current_schema(), '')))",
    )
    return await fn()
  } finally {
    // Ending the session releases the lock as well; unlocking first lets the next process go sooner.
    await client.query('SELECT pg_advisory_unlock_all()').catch(() => {})
    await client.end().catch(() => {})
  }
}
