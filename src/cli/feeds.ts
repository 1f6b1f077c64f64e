import { parseArgs } from 'node:util'
import type { Settings } from '../config/settings.js'
import { FEED_NAMES, type FeedName, isFeedName } from '../intel/feeds/catalog.js'
import { feedStatus, importFeed, updateFeeds } from '../intel/feeds/update.js'
import { loadIntel } from '../intel/index.js'
import { UsageError } from './errors.js'

type Out = (value: unknown) => void

/** `verdict feeds update|import|status`: progress on stderr, one JSON result on stdout. */
export async function feeds(
  sub: string | undefined,
  args: string[],
  settings: Settings,
  out: Out,
  err: (line: string) => void,
): Promise<number> {
  const progress = (line: string) => err(`${line}\n`)
  if (sub === 'update') {
    const { values } = parseArgs({
      args,
      options: { only: { type: 'string' }, force: { type: 'boolean' } },
      strict: true,
    })
    const names = values.only?.split(',').map((n) => n.trim())
    for (const n of names ?? [])
      if (!isFeedName(n)) throw new UsageError(`unknown feed "${n}" (one of ${FEED_NAMES.join(', ')})`)
    const results = await updateFeeds({
      dir: settings.feeds.dir,
      urls: settings.feeds.urls,
      maxBytes: settings.feeds.maxBytes,
      progress,
      force: values.force ?? false,
      ...(names ? { names: names as FeedName[] } : {}),
    })
    out({ results })
    return results.some((r) => r.status === 'failed') ? 1 : 0
  }
  if (sub === 'import') {
    const { positionals, values } = parseArgs({
      args,
      options: { force: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    })
    const [name, file, ...rest] = positionals
    if (!name || !file || rest.length > 0) throw new UsageError('expected: feeds import NAME FILE [--force]')
    if (!isFeedName(name)) throw new UsageError(`unknown feed "${name}" (one of ${FEED_NAMES.join(', ')})`)
    out({
      result: await importFeed(name, file, {
        dir: settings.feeds.dir,
        progress,
        force: values.force ?? false,
      }),
    })
    return 0
  }
  if (sub === 'status') {
    parseArgs({ args, options: {}, strict: true })
    progress('loading reference data…')
    const intel = await loadIntel({ feedsDir: settings.feeds.dir })
    out({ sources: intel.sources(), feeds: await feedStatus(settings.feeds.dir, settings.feeds.urls) })
    return 0
  }
  throw new UsageError(`unknown feeds command: ${sub ?? '(none)'}`)
}
