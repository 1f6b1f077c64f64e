import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { openStore, type StorageTarget } from '../src/store/index.js'
import { monthStart } from '../src/store/schema/partitions.js'
import { createSchema, PG_URL, pgAvailable } from './helpers/pg.js'
import { firstStartKey, type RunningServer, runModuleScript, startServer } from './helpers/processes.js'
import { type StartLine, startLine } from './helpers/start-line.js'

const hasPg = await pgAvailable()
const ROOT = join(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'verdict-concurrent-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const PROCESSES = 4
const SECRET = 'concurrent-start-secret-0123456789abcdef'

/** Starts PROCESSES servers at the same moment on one empty database; stops them all afterwards. */
async function startAll(env: Record<string, string>): Promise<RunningServer[]> {
  const results = await Promise.allSettled(Array.from({ length: PROCESSES }, () => startServer(env)))
  const servers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))
  if (failures.length) {
    await Promise.all(servers.map((s) => s.stop()))
    throw new Error(
      `${failures.length} of ${PROCESSES} servers failed to start:\n${failures.join('\n---\n')}`,
    )
  }
  return servers
}

function keyLines(servers: RunningServer[]): string[] {
  return servers.flatMap((s) => s.stderr().split('\n')).filter((l) => firstStartKey(l) !== undefined)
}

describe('several servers starting at once on an empty database', () => {
  it('SQLite: all come up, one schema, exactly one default tenant and one logged api_key', async () => {
    const file = join(dir, 'verdict.db')
    const servers = await startAll({ DATABASE_URL: file })
    try {
      expect(keyLines(servers)).toHaveLength(1)
      for (const s of servers) expect((await fetch(`${s.url}/v1/health`)).status).toBe(200)
      const apiKey = firstStartKey(keyLines(servers)[0]!)!
      for (const s of servers) {
        expect((await fetch(`${s.url}/v1/config`, { headers: { 'x-api-key': apiKey } })).status).toBe(200)
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
    const db = new Database(file, { readonly: true })
    try {
      expect(db.prepare('SELECT id FROM tenants').all()).toEqual([{ id: 'default' }])
      expect(db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()).toEqual({ n: 1 })
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as {
        version: number
      }[]
      expect(new Set(versions.map((v) => v.version)).size).toBe(versions.length)
    } finally {
      db.close()
    }
  })

  it.skipIf(!hasPg)(
    'PostgreSQL: all come up, exactly one default tenant and one logged api_key',
    async () => {
      const { schema, drop } = await createSchema()
      const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
      try {
        const servers = await startAll({ DATABASE_URL: url, VERDICT_SECRET: SECRET })
        try {
          expect(keyLines(servers)).toHaveLength(1)
          for (const s of servers) expect((await fetch(`${s.url}/v1/health`)).status).toBe(200)
        } finally {
          await Promise.all(servers.map((s) => s.stop()))
        }
        const pg = (await import('pg')).default
        const c = new pg.Client({ connectionString: PG_URL })
        await c.connect()
        try {
          expect((await c.query(`SELECT id FROM ${schema}.tenants`)).rows).toEqual([{ id: 'default' }])
          expect((await c.query(`SELECT COUNT(*)::int AS n FROM ${schema}.api_keys`)).rows).toEqual([
            { n: 1 },
          ])
        } finally {
          await c.end()
        }
      } finally {
        await drop()
      }
    },
  )
})

/**
 * Opens the store and bootstraps the first tenant in a child process running the compiled code, after
 * waiting at the start line: all children then race through migrate() and the bootstrap within milliseconds.
 */
function raceInChild(
  target: StorageTarget,
  line: StartLine,
  pgSchema?: string,
): Promise<{ created: boolean }> {
  const mod = (p: string) => JSON.stringify(join(ROOT, 'dist', 'src', p))
  const script = `
    const { withStartupLock } = await import(${mod('services/runtime/startup-lock.js')})
    const { bootstrapDefaultTenant } = await import(${mod('services/access/tenants.js')})
    const { openStore } = await import(${mod('store/index.js')})
    const target = ${JSON.stringify(target)}
    const opts = ${JSON.stringify(pgSchema ? { pgSchema } : {})}
    const clock = { now: () => Date.now() }
    ${line.childCode}
    const store = await withStartupLock(target, () => openStore(target, opts), opts)
    const created = await withStartupLock(target, () => bootstrapDefaultTenant(store, clock), opts)
    await store.close()
    process.stdout.write(JSON.stringify({ created: created !== null }))`
  return runModuleScript(script).then((out) => JSON.parse(out))
}

describe('migrations and the first tenant, raced by processes released at the same moment', () => {
  async function race(target: StorageTarget, pgSchema?: string) {
    for (let round = 0; round < 2; round++) {
      const line = startLine(dir)
      const children = Array.from({ length: PROCESSES }, () => raceInChild(target, line, pgSchema))
      await line.release(children)
      const results = await Promise.allSettled(children)
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))
      expect(failed).toEqual([])
      const created = results.filter((r) => r.status === 'fulfilled' && r.value.created)
      // Round 0 starts on an empty database; round 1 on a migrated one with the tenant in place.
      expect(created).toHaveLength(round === 0 ? 1 : 0)
    }
    const store = await openStore(target, pgSchema ? { pgSchema } : {})
    try {
      expect((await store.tenants.list()).map((t) => t.id)).toEqual(['default'])
      const keys = await store.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys')
      expect(Number(keys[0]!.n)).toBe(1)
      // PostgreSQL: the event tables are partitioned, with this month's partition made once at start.
      const month = monthStart(Date.now())
      expect((await store.partitions.list()).filter((p) => p.fromMs === month).map((p) => p.table)).toEqual(
        store.partitions.enabled ? ['device_observations', 'events', 'lookups'] : [],
      )
    } finally {
      await store.close()
    }
  }

  it('SQLite: every process succeeds, migrations apply once, exactly one default tenant', async () => {
    await race({ kind: 'sqlite', file: join(mkdtempSync(join(dir, 'race-')), 'verdict.db') })
  }, 180_000)

  it.skipIf(!hasPg)(
    'PostgreSQL: the same under the start-up advisory lock',
    async () => {
      const { schema, drop } = await createSchema()
      try {
        await race({ kind: 'postgres', url: PG_URL }, schema)
      } finally {
        await drop()
      }
    },
    180_000,
  )
})
