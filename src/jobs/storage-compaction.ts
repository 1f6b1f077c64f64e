import type { Job } from './types.js'

/** How long a rewrite waits for a table's exclusive lock before it gives up until the next run. */
export const COMPACTION_LOCK_TIMEOUT_MS = 2_000

/**
 * Finishes erasures on PostgreSQL: rewrites each table an erasure deleted from, so the erased rows'
 * bytes leave its files (VACUUM only makes their space reusable). A table whose lock is not granted in
 * time stays marked and is rewritten at the next run. Nothing to do on SQLite.
 */
export const storageCompactionJob: Job = {
  name: 'storage-compaction',
  scope: 'cluster',
  reads: 'storage_compaction (tables an erasure deleted from)',
  writes: 'rewrites those tables (VACUUM FULL) and clears their marks',
  intervalMs: 3600_000,
  firstRunMs: 5 * 60_000,
  run: async ({ store, log }) => {
    if (!store.compaction.needed) return
    for (const { table, sinceMs } of await store.compaction.pending()) {
      try {
        await store.compaction.rewrite(table, sinceMs, COMPACTION_LOCK_TIMEOUT_MS)
        log.info(`storage-compaction: rewrote ${table}`)
      } catch (err) {
        log.warn({ table, err: (err as Error).message }, 'storage-compaction: table left for the next run')
      }
    }
  },
}
