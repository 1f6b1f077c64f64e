import { createHash } from 'node:crypto'
import pg from 'pg'
import { PostgresDb } from '../../src/store/engine/postgres.js'
import { MIGRATIONS } from '../../src/store/schema/migration-list.js'
import { migrate } from '../../src/store/schema/migrations.js'
import { randomToken } from '../../src/util/secrets.js'
import { missing } from './capabilities.js'

export const PG_URL = process.env['VERDICT_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'

let available: Promise<boolean> | undefined

/** Whether a PostgreSQL server answers at PG_URL. CI (VERDICT_REQUIRE_ALL / _PG) fails when it does not. */
export function pgAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
    try {
      await client.connect()
      await client.query('SELECT 1')
      return true
    } catch (err) {
      return missing(
        'postgres',
        `not reachable at ${PG_URL} (set VERDICT_TEST_PG): ${(err as Error).message}`,
      )
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return available
}

/**
 * A fresh, empty schema in PG_URL's database: for tests that migrate it themselves (concurrent start-ups,
 * migrations up to a version, CLI and server processes on a URL of their own).
 */
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

/*
 * Migrated databases. Migrating a schema costs about a second, so each run copies a database that
 * holds one already migrated schema (`CREATE DATABASE … TEMPLATE`, ~0.1 s). The template's name carries
 * a hash of the migrations (and of the month: the start-up partitions), so a changed migration list
 * builds a new one and worktrees on different migrations never share one. A case's database is named
 * `vt_<run>_<random>`: vitest.config.ts gives each run its id, and the global teardown drops the run's
 * databases in one go (DROP DATABASE forces a checkpoint, too slow to pay per case); the next run's
 * setup drops those of runs that died more than a day ago.
 */

/** The migrated schema's name inside every copy (the copies are databases of their own). */
export const TEMPLATE_SCHEMA = 'verdict_test'
const BUILD_LOCK = 0x7665_7264 // "verd": serialises template builds across worktrees

const TEMPLATE_PREFIX = 'vtmpl_'
const CASE_PREFIX = 'vt_'
const TEMPLATE_COMMENT = 'verdict test template, built '

export function templateName(): string {
  const h = createHash('sha256')
    .update(JSON.stringify(MIGRATIONS))
    .update(String(migrate))
    .update(new Date().toISOString().slice(0, 7))
    .digest('hex')
  return `${TEMPLATE_PREFIX}${h.slice(0, 20)}`
}

/** PG_URL with another database. */
export function urlOf(database: string): string {
  const u = new URL(PG_URL)
  u.pathname = `/${database}`
  return u.toString()
}

async function admin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_URL })
  await c.connect()
  try {
    return await work(c)
  } finally {
    await c.end().catch(() => {})
  }
}

const exists = async (c: pg.Client, name: string) =>
  ((await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0

let templateReady: Promise<string> | undefined

/** The migrated template of this migration list, built once (under a lock other worktrees honour too). */
export function ensureTemplate(): Promise<string> {
  templateReady ??= (async () => {
    const name = templateName()
    await admin(async (c) => {
      if (await exists(c, name)) return
      await c.query('SELECT pg_advisory_lock($1)', [BUILD_LOCK])
      try {
        if (await exists(c, name)) return
        // Built under a name of its own and renamed when complete, so no one copies a half-built one.
        const building = `${name}_b${randomToken(6).toLowerCase()}`
        await c.query(`CREATE DATABASE ${building}`)
        try {
          const db = new PostgresDb(urlOf(building), { schema: TEMPLATE_SCHEMA, max: 1 })
          try {
            await db.exec(`CREATE SCHEMA ${TEMPLATE_SCHEMA}`)
            await migrate(db)
          } finally {
            await db.close()
          }
          await c.query(`COMMENT ON DATABASE ${building} IS '${TEMPLATE_COMMENT}${new Date().toISOString()}'`)
          await c.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
        } catch (err) {
          await c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`).catch(() => {})
          throw err
        }
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [BUILD_LOCK])
      }
    })
    return name
  })()
  return templateReady
}

/** A run id: the database names of a run's copies start with it. */
export const newRunId = () => `${Date.now().toString(36)}_${randomToken(4).toLowerCase()}`
let ownRun: string | undefined

/** The database name prefix of a run's copies. */
export const runPrefix = (run: string) => `${CASE_PREFIX}${run}_`

export interface TestDatabase {
  /** A database of the test's own holding TEMPLATE_SCHEMA, migrated. */
  url: string
  schema: string
  /** Done with it: in a vitest run the run's teardown drops it; elsewhere it is dropped now. */
  drop: () => Promise<void>
}

/** A copy of the migrated template: a database of the test's own, no other test sees its rows. */
export async function createDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate()
  // vitest.config.ts gives every worker of a run the run's id; its global teardown drops the copies.
  const run = process.env['VERDICT_PG_RUN']
  ownRun ??= newRunId()
  const name = `${runPrefix(run ?? ownRun)}${randomToken(10).toLowerCase()}`
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
  return {
    url: urlOf(name),
    schema: TEMPLATE_SCHEMA,
    drop: async () => {
      if (run === undefined) await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    },
  }
}

/**
 * Drops the copies of `run` (the global teardown), and of runs older than a day that never reached
 * theirs. A few at a time: concurrent DROP DATABASEs share the checkpoint each of them waits for.
 */
export async function dropRunDatabases(run: string | undefined): Promise<number> {
  const names = await admin(async (c) => {
    const rows = (
      await c.query<{ datname: string; comment: string | null }>(
        `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database
          WHERE starts_with(datname, $1) OR starts_with(datname, $2)`,
        [CASE_PREFIX, TEMPLATE_PREFIX],
      )
    ).rows
    const dayAgo = Date.now() - 86_400_000
    const weekAgo = Date.now() - 7 * 86_400_000
    const current = templateName()
    return rows
      .filter(({ datname: n, comment }) => {
        if (n.startsWith(TEMPLATE_PREFIX)) {
          // Another worktree may still use an older template: only week-old ones go.
          const built = Date.parse(comment?.replace(TEMPLATE_COMMENT, '') ?? '')
          return n !== current && Number.isFinite(built) && built < weekAgo
        }
        if (run && n.startsWith(runPrefix(run))) return true
        const born = /^vt_([0-9a-z]+)_/.exec(n)?.[1]
        return born !== undefined && Number.parseInt(born, 36) < dayAgo
      })
      .map((r) => r.datname)
  })
  const queue = [...names]
  const worker = () =>
    admin(async (c) => {
      for (let n = queue.shift(); n; n = queue.shift())
        await c.query(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`)
    })
  await Promise.all([worker(), worker(), worker(), worker()])
  return names.length
}
