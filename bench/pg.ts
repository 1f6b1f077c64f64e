import pg from 'pg'
import { randomToken } from '../src/util/secrets.js'

export interface BenchSchema {
  schema: string
  /** Refreshes the planner's statistics of the schema's tables. */
  analyze: () => Promise<void>
  drop: () => Promise<void>
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** A fresh schema for one run, as the PostgreSQL tests do, so a run never sees another's rows. */
export async function createBenchSchema(url: string): Promise<BenchSchema> {
  const schema = `bench_${randomToken(12).toLowerCase()}`
  await withClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`)).catch((err: Error) => {
    throw new Error(`--pg: cannot create a schema at ${redact(url)} (set VERDICT_BENCH_PG): ${err.message}`)
  })
  return {
    schema,
    analyze: () =>
      withClient(url, async (c) => {
        const r = await c.query<{ t: string }>('SELECT tablename AS t FROM pg_tables WHERE schemaname = $1', [
          schema,
        ])
        if (r.rows.length > 0) await c.query(`ANALYZE ${r.rows.map((x) => `${schema}."${x.t}"`).join(', ')}`)
      }),
    drop: () => withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => {}),
  }
}

/** The URL without its password, for printing. */
export function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://…'
  }
}

/**
 * Samples, every 50 ms until stopped, which statements wait on a lock in PostgreSQL: entity advisory
 * locks (store/engine/entity-locks.ts), the usage meter row, the hourly rollup rows, anything else. Shows what
 * serialises several nodes. Counts sessions of the whole server, so other work on it shows up as `other`.
 */
export async function sampleLockWaits(url: string): Promise<{ stop: () => Promise<string> }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  const waits = { entity: 0, usage: 0, rollup: 0, other: 0 }
  let samples = 0
  let on = true
  const loop = (async () => {
    while (on) {
      const r = await client.query<{ q: keyof typeof waits; n: number }>(
        `SELECT CASE WHEN query LIKE '%pg_advisory_xact_lock%' THEN 'entity' WHEN query LIKE '%INTO usage%' THEN 'usage'
           WHEN query LIKE '%INTO event_rollup%' THEN 'rollup' ELSE 'other' END AS q, COUNT(*)::int AS n
           FROM pg_stat_activity WHERE state = 'active' AND wait_event_type = 'Lock' GROUP BY 1`,
      )
      samples++
      for (const x of r.rows) waits[x.q] += x.n
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  return {
    stop: async () => {
      on = false
      await loop
      await client.end().catch(() => {})
      return `lock waits (sessions waiting, summed over ${samples} samples 50 ms apart): entity locks ${waits.entity}, usage row ${waits.usage}, rollup rows ${waits.rollup}, other ${waits.other}`
    },
  }
}
