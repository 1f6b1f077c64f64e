import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { resolveSecret } from '../config/secret.js'
import { parseIp } from '../intel/ip/normalize.js'
import type { StorageTarget, Store } from '../store/index.js'
import { Hasher } from '../util/secrets.js'
import { UsageError } from './errors.js'

/**
 * `verdict traps import FILE`: one trap hit per line, `IP[,TIME[,PATH]]` where TIME is epoch
 * milliseconds or an ISO date (default: now); `#` starts a comment. Malformed lines are counted and
 * skipped; everything valid is written in one transaction.
 */
export async function traps(
  sub: string | undefined,
  args: string[],
  store: Store,
  target: StorageTarget,
  secret: string | undefined,
  out: (v: unknown) => void,
  err: (line: string) => void,
): Promise<number> {
  if (sub !== 'import') throw new UsageError(`unknown traps command: ${sub ?? '(none)'}`)
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true })
  const [file, ...rest] = positionals
  if (!file || rest.length) throw new UsageError('expected: traps import FILE')
  const hasher = new Hasher(await resolveSecret(store, target, secret))
  const lines = (await readFile(file, 'utf8')).split(/\r?\n/)
  const hits: { ipHash: string; prefix: string; path: string; at: number }[] = []
  let malformed = 0
  const now = Date.now()
  for (const raw of lines) {
    const line = raw.replace(/#.*/, '').trim()
    if (!line) continue
    const [ipText, timeText, path] = line.split(',').map((x) => x.trim())
    const ip = parseIp(ipText ?? '')
    const at = !timeText ? now : /^\d+$/.test(timeText) ? Number(timeText) : Date.parse(timeText)
    if (!ip || !Number.isFinite(at)) {
      malformed++
      continue
    }
    hits.push({ ipHash: hasher.entity('ip', ip.ip), prefix: ip.prefix, path: path || 'import', at })
  }
  err(
    `traps: ${hits.length} hits read from ${file}${malformed ? `, ${malformed} malformed lines skipped` : ''}\n`,
  )
  const stored = await store.db.tx(function* () {
    let n = 0
    for (let i = 0; i < hits.length; i++) {
      const h = hits[i]!
      if (
        yield* store.network.addTrapHit({
          ipHash: h.ipHash,
          ipPrefix: h.prefix,
          path: h.path,
          source: 'import',
          atMs: h.at,
        })
      )
        n++
      if ((i + 1) % 10_000 === 0) err(`traps: ${i + 1}/${hits.length} written\n`)
    }
    return n
  })
  // Hits repeating an IP and path within the hour, or past the per-IP cap, are not stored again.
  out({ imported: hits.length, stored, malformed })
  return 0
}
