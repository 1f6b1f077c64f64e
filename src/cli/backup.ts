import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { sqliteSecret } from '../config/secret.js'
import type { Settings } from '../config/settings.js'
import { backupSqlite, restoreSqlite } from '../services/privacy/backup.js'
import { systemClock } from '../util/clock.js'
import { makePrivateDir } from '../util/private-files.js'
import { Hasher } from '../util/secrets.js'
import { UsageError } from './errors.js'

type Out = (value: unknown) => void

/** The server's secret: VERDICT_SECRET, else the generated file beside a SQLite database. */
function hasherFor(settings: Settings): Hasher {
  const { storage, secret } = settings
  if (secret !== undefined) return new Hasher(secret)
  if (storage.kind !== 'sqlite') return new Hasher('') // the service refuses PostgreSQL before using it
  makePrivateDir(dirname(storage.file))
  return new Hasher(sqliteSecret(storage.file))
}

/** `verdict backup FILE [--force]` and `verdict restore FILE`: progress on stderr, JSON on stdout. */
export async function backupCommand(
  command: 'backup' | 'restore',
  args: string[],
  settings: Settings,
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
  if (!file || extra.length > 0) throw new UsageError(`expected exactly one FILE for ${command}`)
  if (command === 'restore' && values.force) throw new UsageError('restore takes no --force')
  const progress = (line: string) => err(`${line}\n`)
  const hasher = hasherFor(settings)
  if (command === 'backup') {
    const deps = { hasher, clock: systemClock, force: values.force ?? false, progress }
    out(await backupSqlite(settings.storage, file, deps))
  } else {
    out(await restoreSqlite(settings.storage, file, { hasher, clock: systemClock, progress }))
  }
  return 0
}
