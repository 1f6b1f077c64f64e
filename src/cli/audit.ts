import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { applyAudit, exportAudit, parseAuditFile } from '../services/privacy/audit.js'
import type { Store } from '../store/index.js'
import { systemClock } from '../util/clock.js'
import { privateTempBeside } from '../util/private-files.js'
import type { Hasher } from '../util/secrets.js'
import { UsageError } from './errors.js'

type Out = (value: unknown) => void

/**
 * `verdict audit export FILE [--force]` and `verdict audit apply FILE`: carry the suppression audit
 * across a restore (PostgreSQL: export before pg_restore, apply after it; SQLite's restore does both).
 */
export async function auditCommand(
  sub: string | undefined,
  args: string[],
  store: Store,
  hasher: Hasher,
  out: Out,
  err: (line: string) => void,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    options: { force: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  })
  const [file, ...extra] = positionals
  if (sub !== 'export' && sub !== 'apply') throw new UsageError(`unknown audit command: ${sub ?? '(none)'}`)
  if (!file || extra.length > 0) throw new UsageError(`expected exactly one FILE for audit ${sub}`)
  if (sub === 'export') {
    if (existsSync(file) && !values.force) throw new UsageError(`${file} exists (--force replaces it)`)
    const audit = await exportAudit(store, hasher, systemClock)
    // A private temp dir beside the file and an exclusive create: a planted symlink cannot redirect it.
    const temp = privateTempBeside(file)
    try {
      writeFileSync(temp.file, `${JSON.stringify(audit)}\n`, { mode: 0o600, flag: 'wx' })
      renameSync(temp.file, file)
    } finally {
      temp.cleanup()
    }
    out({ exported: file, rows: audit.rows.length })
    return 0
  }
  if (values.force) throw new UsageError('audit apply takes no --force')
  const audit = parseAuditFile(readFileSync(file, 'utf8'), hasher)
  err(`audit: applying ${audit.rows.length} suppression(s) exported at ${audit.exportedAt}\n`)
  const applied = await applyAudit(store, hasher, systemClock, audit.rows)
  err(`audit: ${applied.reapplied} erased identifier(s) found and erased again\n`)
  out({ applied: file, ...applied })
  return 0
}
