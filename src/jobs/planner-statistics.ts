import { tablesToAnalyze } from '../store/schema/statistics.js'
import type { Job } from './types.js'

/**
 * PostgreSQL without autovacuum (a server so configured, or a table with `autovacuum_enabled = false`)
 * never refreshes its planner statistics, and the scoring statements keep the plans they got when the
 * tables were empty (store/schema/statistics.ts). This job analyses such a table once autovacuum's own
 * threshold says it changed enough; with autovacuum on it finds nothing to do. Nothing on SQLite.
 */
export const plannerStatisticsJob: Job = {
  name: 'planner-statistics',
  scope: 'cluster',
  reads: "the statistics catalog of the schema's tables (pg_stat_user_tables), PostgreSQL only",
  writes: "PostgreSQL's planner statistics of the tables autovacuum does not analyse (ANALYZE)",
  // Autovacuum's own default pace (autovacuum_naptime).
  intervalMs: 60_000,
  run: async ({ store, log }) => {
    if (!store.statistics.enabled) return
    const { tables, threshold } = await store.statistics.activity()
    for (const table of tablesToAnalyze(tables, threshold)) {
      await store.statistics.analyze(table)
      log.info(`planner-statistics: analysed ${table} (autovacuum is off for it)`)
    }
  },
}
