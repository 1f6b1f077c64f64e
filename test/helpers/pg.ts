import pg from 'pg'
import { randomToken } from '../../src/util/secrets.js'

export const PG_URL = process.env['VERDICT_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'

let available: Promise<boolean> | undefined

/** Whether a PostgreSQL server answers at PG_URL. CI sets VERDICT_REQUIRE_PG=1 so a missing server fails. */
export function pgAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
    try {
      await client.connect()
      await client.query('SELECT 1')
      return true
    } catch (err) {
      if (process.env['VERDICT_REQUIRE_PG'] === '1')
        throw new Error(`PostgreSQL required but not reachable at ${PG_URL}: ${(err as Error).message}`)
      console.warn(
        `\n*** PostgreSQL not reachable at ${PG_URL}: PostgreSQL tests are SKIPPED (set VERDICT_TEST_PG) ***\n`,
      )
      return false
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return available
}

/** A fresh schema per test so PostgreSQL tests never see each other's rows. */
export async function createSchema(): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = `t_${randomToken(12).toLowerCase()}`
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.end()
  return {
    schema,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await c.end()
    },
  }
}
