import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { createTenant } from '../../src/services/tenants.js'
import { Store } from '../../src/store/index.js'
import { migrate } from '../../src/store/migrations.js'
import { SqliteDb, type SqliteOptions } from '../../src/store/sqlite.js'
import { ManualClock } from '../../src/util/clock.js'
import { Hasher } from '../../src/util/secrets.js'
import type { Harness } from './build.js'
import { testIntel } from './intel.js'

/**
 * The app over a SQLite store built with explicit executor options (a short busy budget, no
 * checkpointer, …), for the tests of the executor itself. Like build(), but the caller picks the options.
 */
export async function buildSqlite(options: SqliteOptions): Promise<Harness & { file: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-test-'))
  const file = join(dir, 'verdict.db')
  const db = new SqliteDb(file, options)
  await migrate(db)
  const store = new Store(db)
  const clock = new ManualClock()
  const hasher = new Hasher('test-secret-for-hashes')
  const app = await buildApp({ store, clock, hasher, intel: (await testIntel()).intel })
  let n = 0
  return {
    app,
    store,
    clock,
    hasher,
    dir,
    file,
    async tenant(input = {}) {
      const t = await createTenant(store, clock, { name: `tenant-${++n}`, ...input })
      return { tenantId: t.tenantId, apiKey: t.apiKey, keyId: t.keyId, headers: { 'x-api-key': t.apiKey } }
    },
    async close() {
      await app.close()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Polls `probe` until it returns true or `boundMs` passes; returns the last answer. No timing assertion. */
export async function eventually(
  probe: () => Promise<boolean> | boolean,
  boundMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + boundMs
  for (;;) {
    if (await probe()) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 25))
  }
}
