import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'

/**
 * What the environment must offer for some tests: the shared PostgreSQL and Redis servers, binaries the
 * tests start themselves, a tmpfs mount (root), a browser. CI (`.ci/run`) sets VERDICT_REQUIRE_ALL=1,
 * so anything missing fails the run there; elsewhere the tests that need it are skipped and the
 * capability reporter (test/helpers/capability-reporter.ts) lists them at the end of the run.
 */
export type Capability =
  | 'postgres'
  | 'redis'
  | 'chromium'
  | 'redis-server'
  | 'own-postgres'
  | 'tmpfs'
  | 'script'

/** The older per-capability switches, still honoured. */
const REQUIRE_VAR: Partial<Record<Capability, string>> = {
  postgres: 'VERDICT_REQUIRE_PG',
  'own-postgres': 'VERDICT_REQUIRE_PG',
  redis: 'VERDICT_REQUIRE_REDIS',
  'redis-server': 'VERDICT_REQUIRE_REDIS',
  chromium: 'VERDICT_REQUIRE_BROWSER',
}

/** Marker files of missing capabilities, read by the reporter (vitest.config.ts sets the directory). */
export const CAPABILITY_DIR_VAR = 'VERDICT_CAPABILITY_DIR'

export interface MissingMarker {
  capability: Capability
  reason: string
  file: string | undefined
}

export function isRequired(capability: Capability): boolean {
  if (process.env['VERDICT_REQUIRE_ALL'] === '1') return true
  const v = REQUIRE_VAR[capability]
  return v !== undefined && process.env[v] === '1'
}

function currentFile(): string | undefined {
  try {
    return expect.getState().testPath
  } catch {
    return undefined
  }
}

/**
 * Reports a capability this environment lacks: throws where it is required, otherwise records it for
 * the end-of-run summary and answers false (the caller skips its tests).
 */
export function missing(capability: Capability, reason: string): false {
  if (isRequired(capability))
    throw new Error(
      `${capability} is required (VERDICT_REQUIRE_ALL or its own switch) but missing: ${reason}`,
    )
  const dir = process.env[CAPABILITY_DIR_VAR]
  const marker: MissingMarker = { capability, reason, file: currentFile() }
  if (dir && existsSync(dir)) appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify(marker)}\n`)
  else console.warn(`\n*** ${capability} missing (${reason}): its tests are SKIPPED ***\n`)
  return false
}

/** Whether `cmd args` runs and exits 0 (a binary's --version, say). */
function runs(cmd: string, args: string[]): { ok: boolean; why: string } {
  const r = spawnSync(cmd, args, { stdio: 'pipe', timeout: 10_000 })
  if (r.error)
    return { ok: false, why: `${cmd}: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}` }
  return r.status === 0
    ? { ok: true, why: '' }
    : { ok: false, why: `${cmd} ${args.join(' ')} exited ${r.status}` }
}

/** Binaries on PATH the tests start themselves. Probed once per worker. */
const binaryCache = new Map<Capability, boolean>()
export function hasBinary(capability: 'redis-server' | 'script'): boolean {
  const known = binaryCache.get(capability)
  if (known !== undefined) return known
  const probe =
    capability === 'redis-server' ? runs('redis-server', ['--version']) : runs('script', ['--version'])
  const ok = probe.ok || missing(capability, probe.why)
  binaryCache.set(capability, ok)
  return ok
}

/** For setup that can only be tried inside the test (a mount): skip it at run time, or fail in CI. */
export function skipUnless(
  ctx: { skip: (note?: string) => void },
  capability: Capability,
  why: string | null,
): void {
  if (why === null) return
  missing(capability, why)
  ctx.skip(`${capability} missing: ${why}`)
}
