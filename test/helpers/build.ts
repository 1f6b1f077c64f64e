import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AppOptions, buildApp } from '../../src/app.js'
import { envDefault } from '../../src/config/schema.js'
import type { AppServices } from '../../src/context.js'
import { backgroundJobs, Scheduler } from '../../src/jobs/index.js'
import { sharedSchemaCompilers } from '../../src/plugins/schema-compilers.js'
import type { App } from '../../src/routes/types.js'
import { createTenant, type NewTenant } from '../../src/services/access/tenants.js'
import { AsnRates } from '../../src/services/network/asn-rates.js'
import type { SqliteOptions } from '../../src/store/engine/sqlite.js'
import { openStore, type Store } from '../../src/store/index.js'
import { ManualClock } from '../../src/util/clock.js'
import { Hasher } from '../../src/util/secrets.js'
import { testIntel } from './intel.js'
import { createDatabase } from './pg.js'

export type Engine = 'sqlite' | 'postgres'

/** One set of schema compilers for every app this test process builds: each route compiles once. */
const schemaCompilers = sharedSchemaCompilers()

/**
 * The scrypt cost of console passwords in the harness: real scrypt at 2^12 instead of 2^17, so the
 * many sign-ins of the tests take milliseconds (test/security/password-hash.test.ts uses the real one).
 */
export const TEST_PASSWORD_COST = { N: 4096, r: 8, p: 1 }

/** The harness's server secret (at least 32 bytes, as VERDICT_SECRET must be); CLI tests pass it on. */
export const TEST_SECRET = 'test-secret-for-hashes-0123456789abcdef'

export interface TestTenant {
  tenantId: string
  apiKey: string
  keyId: string
  headers: { 'x-api-key': string }
}

export interface Harness {
  app: App
  store: Store
  clock: ManualClock
  hasher: Hasher
  /** The app's services, to build a context for calling service verbs directly (contextFor). */
  services: AppServices
  /** Directory holding the SQLite files (sqlite engine only). */
  dir: string
  /** The store's own database (postgres engine only; its tables are in `current_schema()`), for other connections. */
  pgUrl: string | undefined
  /** The server's background jobs over this app's parts, never started: tests call `runNow`. */
  jobs: Scheduler
  tenant(input?: Partial<NewTenant>): Promise<TestTenant>
  close(): Promise<void>
}

/** A fresh store (SQLite file in a temp dir, a copy of the migrated PostgreSQL template, or a server of the test's own) and app. */
export async function openTestStore(engine: Engine = 'sqlite', sqlite?: SqliteOptions, ownPgUrl?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-test-'))
  if (ownPgUrl) {
    // A server of the test's own (helpers/own-postgres.ts): its default schema is the test's alone.
    const store = await openStore({ kind: 'postgres', url: ownPgUrl })
    return {
      store,
      dir,
      pgUrl: ownPgUrl,
      cleanup: async () => {
        await store.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  if (engine === 'postgres') {
    const { url, schema, drop } = await createDatabase()
    const store = await openStore({ kind: 'postgres', url }, { pgSchema: schema })
    return {
      store,
      dir,
      pgUrl: url,
      cleanup: async () => {
        await store.close()
        await drop()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'verdict.db') }, sqlite ? { sqlite } : {})
  return {
    store,
    dir,
    pgUrl: undefined,
    cleanup: async () => {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export async function build(
  options: { engine?: Engine; sqlite?: SqliteOptions; pgUrl?: string } & Partial<
    Omit<AppOptions, 'store' | 'clock' | 'hasher' | 'intel'>
  > & {
      intel?: AppOptions['intel']
    } = {},
): Promise<Harness> {
  const { engine, sqlite, pgUrl: ownPgUrl, ...appOptions } = options
  const { store, dir, pgUrl, cleanup } = await openTestStore(engine, sqlite, ownPgUrl)
  const clock = new ManualClock()
  const hasher = new Hasher(TEST_SECRET)
  const intel = appOptions.intel ?? (await testIntel()).intel
  const asnRates = appOptions.asnRates ?? new AsnRates()
  const app = await buildApp({
    store,
    clock,
    hasher,
    passwordCost: TEST_PASSWORD_COST,
    schemaCompilers,
    ...appOptions,
    intel,
    asnRates,
  })
  const jobs = new Scheduler(
    backgroundJobs({
      feedsReloadMs: envDefault('VERDICT_FEEDS_RELOAD_MS'),
      retentionDays: envDefault('VERDICT_RETENTION_DAYS'),
    }),
    {
      store,
      clock,
      intel,
      asnRates,
      ja4Signatures: app.services.ja4Signatures,
      log: app.log,
    },
  )
  let n = 0
  return {
    app,
    store,
    clock,
    hasher,
    services: app.services,
    dir,
    pgUrl,
    jobs,
    async tenant(input = {}) {
      const t = await createTenant(store, clock, { name: `tenant-${++n}`, ...input })
      return { tenantId: t.tenantId, apiKey: t.apiKey, keyId: t.keyId, headers: { 'x-api-key': t.apiKey } }
    },
    async close() {
      await jobs.stop()
      await app.close()
      await cleanup()
    },
  }
}
