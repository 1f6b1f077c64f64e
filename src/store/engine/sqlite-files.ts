import { existsSync, renameSync, rmSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'

/** A backup or restore that cannot go ahead; the message says why and what to do. */
export class FileOpError extends Error {}

export interface BackupProgress {
  totalPages: number
  remainingPages: number
}

/**
 * Copies the live database into `dest` with SQLite's online backup API, on a connection of its own, so
 * the server goes on writing. The first step copies a few pages; the rest is copied in one step, during
 * which writers carry on in the WAL and the copy stays the snapshot the step started from (a write by
 * another process between steps would restart the copy, so there is only one such gap).
 */
export async function backupDatabase(
  file: string,
  dest: string,
  progress: (p: BackupProgress) => void,
): Promise<{ pages: number }> {
  if (!existsSync(file)) throw new FileOpError(`no database at ${file}`)
  const source = new Database(file, { readonly: true, fileMustExist: true, timeout: 5_000 })
  try {
    let pages = 0
    await source.backup(dest, {
      progress: (p) => {
        pages = p.totalPages
        progress(p)
        return Math.max(1, p.remainingPages)
      },
    })
    return { pages }
  } finally {
    source.close()
  }
}

/** What a verdict database file says about itself; throws when it is not one or is damaged. */
export function inspectDatabase(file: string): {
  schemaVersion: number
  tenants: number
  meta: Map<string, string>
} {
  if (!existsSync(file) || !statSync(file).isFile()) throw new FileOpError(`no file at ${file}`)
  let db: Database.Database
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
  } catch (err) {
    throw new FileOpError(`${file} is not a SQLite database: ${(err as Error).message}`)
  }
  try {
    const check = db.pragma('quick_check', { simple: true })
    if (check !== 'ok') throw new FileOpError(`${file} is damaged: ${String(check)}`)
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (t) => t.name,
      ),
    )
    for (const t of ['schema_migrations', 'tenants', 'meta'])
      if (!tables.has(t)) throw new FileOpError(`${file} is not a verdict database (no ${t} table)`)
    const version = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as {
      v: number | null
    }
    const tenants = db.prepare('SELECT count(*) AS n FROM tenants').get() as { n: number }
    const meta = new Map(
      (db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    )
    return { schemaVersion: Number(version.v ?? 0), tenants: Number(tenants.n), meta }
  } catch (err) {
    if (err instanceof FileOpError) throw err
    throw new FileOpError(`${file} cannot be read as a verdict database: ${(err as Error).message}`)
  } finally {
    db.close()
  }
}

/**
 * Writes one meta row into a database file that no server uses (the fresh backup copy) and leaves it
 * in rollback-journal mode: one self-contained file, with no -wal or -shm to lose beside it.
 */
export function writeMeta(file: string, key: string, value: string): void {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('journal_mode = DELETE')
    db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value)
  } finally {
    db.close()
  }
}

/**
 * Refuses when any process has the database open. A connection in WAL mode holds a shared lock on
 * the WAL index for as long as it is open, so leaving WAL mode (which needs every other connection
 * gone) fails with SQLITE_BUSY exactly while a server, or anything else, uses the file. On success
 * the WAL is folded into the file and removed, so the file alone is the whole database.
 */
export function assertNotInUse(file: string): void {
  if (!existsSync(file)) return
  const db = new Database(file, { fileMustExist: true, timeout: 0 })
  try {
    db.pragma('journal_mode = DELETE')
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new FileOpError(
        `${file} is in use by a running process (a verdict server?): stop it before restoring`,
      )
    throw err
  } finally {
    db.close()
  }
}

/** Moves `source` over `target` in one rename, with no stale WAL or shared-memory file left beside it. */
export function replaceDatabase(source: string, target: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${target}${suffix}`, { force: true })
  renameSync(source, target)
}
