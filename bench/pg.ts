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
