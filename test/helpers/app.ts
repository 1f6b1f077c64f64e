import { join } from 'node:path'
import type { SqliteOptions } from '../../src/store/engine/sqlite.js'
import { build, type Harness } from './build.js'

/**
 * The app over a SQLite store built with explicit executor options (a short busy budget, no
 * checkpointer, …), for the tests of the executor itself.
 */
export async function buildSqlite(options: SqliteOptions): Promise<Harness & { file: string }> {
  const h = await build({ sqlite: options })
  return { ...h, file: join(h.dir, 'verdict.db') }
}

/** Polls `probe` every `everyMs` until it returns true or `boundMs` passes; returns whether it did. */
export async function eventually(
  probe: () => Promise<boolean> | boolean,
  boundMs = 10_000,
  everyMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + boundMs
  for (;;) {
    if (await probe()) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
