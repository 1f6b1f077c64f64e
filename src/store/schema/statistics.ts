import type { Db } from '../engine/db.js'

/**
 * PostgreSQL's planner statistics of verdict's tables. Statements are prepared once per connection with
 * generic plans (engine/postgres.ts), planned from the statistics of the moment: a table never analysed
 * since it was empty (a new install, each new month's partitions) gets plans made for an empty table,
 * and on a busy tenant such a plan can read the whole month's partition for every event (the account's
 * history through the wrong index). Autovacuum analyses a table once enough of it changed, which
 * invalidates those plans; a server that runs without it never does. This store does autovacuum's
 * analyse, by its own threshold, for the tables autovacuum leaves alone. Nothing on SQLite.
 */
export interface TableActivity {
  name: string
  /** Rows inserted, updated or deleted since the table was last analysed. */
  changed: number
  /** PostgreSQL's estimate of the rows the table holds (0 when never analysed). */
  rows: number
  /** Whether autovacuum may analyse this table (the server's setting and the table's own). */
  autovacuum: boolean
}

export interface AnalyzeThreshold {
  /** `autovacuum_analyze_threshold` and `autovacuum_analyze_scale_factor` of the server. */
  base: number
  scale: number
}

/** The tables autovacuum would analyse now but will not, because it is off for them. */
export function tablesToAnalyze(tables: readonly TableActivity[], t: AnalyzeThreshold): string[] {
  return tables
    .filter((x) => !x.autovacuum && x.changed > t.base + t.scale * x.rows)
    .map((x) => x.name)
    .sort()
}

export class StatisticsStore {
  constructor(private readonly db: Db) {}

  get enabled(): boolean {
    return this.db.dialect === 'postgres'
  }

  /** Every ordinary table of the current schema (partitions included), with what autovacuum would read. */
  async activity(): Promise<{ tables: TableActivity[]; threshold: AnalyzeThreshold }> {
    if (!this.enabled) return { tables: [], threshold: { base: 0, scale: 0 } }
    const rows = await this.db.all<{ name: string; changed: string; rows: number; autovacuum: boolean }>(
      `SELECT s.relname AS name, s.n_mod_since_analyze AS changed, GREATEST(c.reltuples, 0) AS rows,
              current_setting('autovacuum') = 'on' AND NOT COALESCE(
                (SELECT option_value IN ('false', 'off', 'no', '0') FROM pg_options_to_table(c.reloptions)
                  WHERE option_name = 'autovacuum_enabled'), false) AS autovacuum
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.schemaname = current_schema() AND c.relkind = 'r'`,
    )
    const setting = await this.db.get<{ base: string; scale: string }>(
      `SELECT current_setting('autovacuum_analyze_threshold') AS base,
              current_setting('autovacuum_analyze_scale_factor') AS scale`,
    )
    return {
      tables: rows.map((r) => ({
        name: r.name,
        changed: Number(r.changed),
        rows: Number(r.rows),
        autovacuum: r.autovacuum,
      })),
      threshold: { base: Number(setting?.base ?? 50), scale: Number(setting?.scale ?? 0.1) },
    }
  }

  /** Analyses one table of the current schema (its name as the catalog gives it). */
  async analyze(table: string): Promise<void> {
    if (!this.enabled) return
    await this.db.exec(`ANALYZE "${table.replaceAll('"', '""')}"`)
  }
}
