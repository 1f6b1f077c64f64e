import { execFileSync } from 'node:child_process'
import { isRequired } from './helpers/capabilities.js'
import { dropRunDatabases, ensureTemplate } from './helpers/pg.js'

/**
 * The CLI and server tests run the compiled program exactly as users do; build it once up front. The
 * PostgreSQL template is migrated here once (tests copy it), and the run's copies are dropped at the end.
 */
export default async function setup(): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' })
  let pg = true
  try {
    await ensureTemplate()
    await dropRunDatabases(undefined)
  } catch (err) {
    // No server: the PostgreSQL tests report the missing capability themselves (and fail in CI).
    if (isRequired('postgres')) throw err
    pg = false
  }
  return async () => {
    if (pg) await dropRunDatabases(process.env['VERDICT_PG_RUN'])
  }
}
