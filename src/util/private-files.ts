import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/** Creates `dir` (and its missing parents) readable by the owner only; an existing one is left as is. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
}

/**
 * Creates `file` empty with mode 0600 before anything else opens it (SQLite gives its WAL and
 * shared-memory files the main file's mode), unless it exists already.
 */
export function createPrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

/**
 * A temporary path for a file that is renamed over `target` once complete: inside a fresh directory
 * beside it (same file system, so the rename is atomic) with an unguessable name and mode 0700, so
 * nobody can plant a symlink at it or read the file while it is written. `cleanup` removes the dir.
 */
export function privateTempBeside(target: string): { file: string; cleanup: () => void } {
  const dir = mkdtempSync(join(dirname(target), `.${basename(target)}.tmp-`))
  return { file: join(dir, basename(target)), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}
