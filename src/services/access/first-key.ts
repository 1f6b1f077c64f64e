import { closeSync, openSync, writeSync } from 'node:fs'
import type { IssuedKey } from './tenants.js'

/**
 * Shows the first start's key once on the terminal, outside the structured log: whatever the log
 * level it is seen, and it never travels with the logs. Only its hash is kept, so when asked
 * (VERDICT_FIRST_KEY_FILE) it is also written to a file only the owner can read; an existing file
 * is never overwritten.
 */
export function announceFirstKey(
  key: IssuedKey,
  keyFile: string | undefined,
  write: (text: string) => void,
): void {
  let saved = ''
  if (keyFile) {
    try {
      const fd = openSync(keyFile, 'wx', 0o600)
      try {
        writeSync(fd, `${key.apiKey}\n`)
      } finally {
        closeSync(fd)
      }
      saved = `verdict: also written to ${keyFile} (mode 0600); delete it once the key is stored safely\n`
    } catch (err) {
      saved = `verdict: could not write ${keyFile}: ${(err as Error).message}\n`
    }
  }
  write(
    `verdict: first start: created tenant "default" (key id ${key.keyId})\n` +
      `verdict: its API key, shown only this once: ${key.apiKey}\n` +
      saved +
      'verdict: only its hash is kept; if it is lost, create another with: npx verdict keys create --tenant default\n',
  )
}
