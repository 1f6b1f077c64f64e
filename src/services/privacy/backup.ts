import { copyFileSync, existsSync, renameSync, statSync } from 'node:fs'
import {
  assertNotInUse,
  backupDatabase,
  FileOpError,
  inspectDatabase,
  replaceDatabase,
  writeMeta,
} from '../../store/engine/sqlite-files.js'
import { openStore, type StorageTarget } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { createPrivateFile, privateTempBeside } from '../../util/private-files.js'
import type { Hasher } from '../../util/secrets.js'
import { type AuditRow, applyAudit, secretCheck } from './audit.js'

export { FileOpError } from '../../store/engine/sqlite-files.js'

/** Meta key of the note a backup carries: when it was taken, and which secret its hashes were made with. */
const BACKUP_META = 'backup'

type Progress = (line: string) => void

function sqliteFile(target: StorageTarget, verb: string): string {
  if (target.kind !== 'sqlite') {
    throw new FileOpError(
      `${verb} works on SQLite only; for PostgreSQL use pg_dump / pg_restore or point-in-time recovery (docs/operations.md)`,
    )
  }
  if (target.file === ':memory:') throw new FileOpError(`${verb}: an in-memory database has no file`)
  return target.file
}

/** `verdict backup FILE`: an online, consistent copy of the running SQLite database, written atomically. */
export async function backupSqlite(
  target: StorageTarget,
  dest: string,
  deps: { hasher: Hasher; clock: Clock; force: boolean; progress: Progress },
) {
  const file = sqliteFile(target, 'backup')
  if (existsSync(dest) && !deps.force) throw new FileOpError(`${dest} exists (--force replaces it)`)
  // Written in a private directory beside the target, 0600 from its first byte, then renamed over it.
  const temp = privateTempBeside(dest)
  const partial = temp.file
  try {
    createPrivateFile(partial)
    let last = -1
    const { pages } = await backupDatabase(file, partial, ({ totalPages, remainingPages }) => {
      const pct = totalPages ? Math.floor(((totalPages - remainingPages) / totalPages) * 100) : 100
      if (pct !== last) deps.progress(`backup: ${totalPages - remainingPages}/${totalPages} pages (${pct}%)`)
      last = pct
    })
    if (last !== 100) deps.progress(`backup: ${pages}/${pages} pages (100%)`)
    const takenMs = deps.clock.now()
    writeMeta(partial, BACKUP_META, JSON.stringify({ takenMs, secretCheck: secretCheck(deps.hasher) }))
    const info = inspectDatabase(partial)
    renameSync(partial, dest)
    deps.progress(`backup: verified, ${info.tenants} tenant(s), schema version ${info.schemaVersion}`)
    return {
      backup: dest,
      pages,
      bytes: statSync(dest).size,
      takenAt: new Date(takenMs).toISOString(),
      schemaVersion: info.schemaVersion,
      tenants: info.tenants,
    }
  } finally {
    temp.cleanup()
  }
}

/**
 * `verdict restore FILE`: replaces the (stopped) SQLite database with a backup, then re-applies the
 * suppression audit of the database it replaces, so a person erased after the backup was taken is
 * erased again and every suppression keeps acting. Refuses a running database and a backup made with
 * another secret (none of its hashes would match).
 */
export async function restoreSqlite(
  target: StorageTarget,
  source: string,
  deps: { hasher: Hasher; clock: Clock; progress: Progress },
) {
  const file = sqliteFile(target, 'restore')
  const info = inspectDatabase(source)
  const note = info.meta.get(BACKUP_META)
  if (note) {
    const taken = JSON.parse(note) as { secretCheck?: string }
    if (taken.secretCheck !== secretCheck(deps.hasher)) {
      throw new FileOpError(
        `${source} was taken with another server secret: restore it with that secret (VERDICT_SECRET or its verdict.secret file)`,
      )
    }
  }
  assertNotInUse(file)
  let audit: AuditRow[] = []
  let currentTenants = new Set<string>()
  if (existsSync(file)) {
    const current = await openStore(target)
    try {
      audit = await current.restore.audit()
      currentTenants = await current.restore.tenantIds()
    } finally {
      await current.close()
    }
    deps.progress(`restore: ${audit.length} suppression(s) in the audit of the database being replaced`)
    assertNotInUse(file)
  }
  const temp = privateTempBeside(file)
  const staging = temp.file
  try {
    createPrivateFile(staging)
    copyFileSync(source, staging)
    replaceDatabase(staging, file)
  } finally {
    temp.cleanup()
  }
  deps.progress(`restore: ${source} is now ${file}`)
  const store = await openStore(target)
  try {
    const applied = await applyAudit(store, deps.hasher, deps.clock, audit)
    deps.progress(`restore: ${applied.reapplied} erased identifier(s) found in the backup and erased again`)
    const restoredTenants = await store.restore.tenantIds()
    const reappeared = [...restoredTenants].filter((t) => currentTenants.size > 0 && !currentTenants.has(t))
    return {
      restored: file,
      from: source,
      schemaVersion: info.schemaVersion,
      suppressions: { carried: applied.carried, reapplied: applied.reapplied },
      deleted: applied.deleted,
      // Tenants deleted after the backup was taken come back with it: the operator decides.
      ...(reappeared.length
        ? { warnings: [`tenants absent before the restore: ${reappeared.join(', ')}`] }
        : {}),
    }
  } finally {
    await store.close()
  }
}
