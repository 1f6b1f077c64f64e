import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { randomToken } from '../util/secrets.js'
import type { StorageTarget, Store } from './index.js'

/**
 * The server secret: from VERDICT_SECRET, else generated once and kept beside the SQLite file
 * (mode 0600) or in the PostgreSQL database, so restarts keep hashes and device tokens valid.
 */
export async function resolveSecret(
  store: Store,
  target: StorageTarget,
  fromEnv: string | undefined,
): Promise<string> {
  if (fromEnv) return fromEnv
  if (target.kind === 'sqlite' && target.file !== ':memory:') {
    const file = join(dirname(target.file), 'verdict.secret')
    if (existsSync(file)) return readFileSync(file, 'utf8').trim()
    const secret = randomToken(48)
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' })
    chmodSync(file, 0o600)
    return secret
  }
  return store.tenants.putMetaOnce('secret', randomToken(48))
}
