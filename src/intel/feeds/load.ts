import { RangeSet } from '../ip/ranges.js'
import { FEED_NAMES, FEEDS, type FeedName } from './catalog.js'
import { parseFeedText } from './formats.js'
import { type FeedMeta, readFeedData, readFeedMeta } from './store.js'

export interface LoadedFeed {
  name: FeedName
  meta: FeedMeta | null
  /** Entries actually loaded from the stored file. */
  entries: number
  ranges: RangeSet | null
  /** AS number → operator name (null when unnamed), for ASN feeds. */
  asns: Map<number, string | null> | null
}

export type LoadedFeeds = Partial<Record<FeedName, LoadedFeed>>

/** Reads one stored feed; null when nothing usable is stored. */
export async function loadFeed(dir: string, name: FeedName): Promise<LoadedFeed | null> {
  const text = await readFeedData(dir, name)
  if (text === null) return null
  const def = FEEDS[name]
  // Stored copies are normalised cidr-list / asn-list text whatever the upstream format was.
  const parsed = parseFeedText(
    { kind: def.kind, format: def.kind === 'asns' ? 'asn-list' : 'cidr-list', named: def.named },
    text,
  )
  if (parsed.entries.length === 0) return null
  // The metadata only describes the data; a damaged file must not keep the data from loading.
  const meta = await readFeedMeta(dir, name).catch(() => null)
  if (parsed.kind === 'asns') {
    const asns = new Map<number, string | null>()
    for (const e of parsed.entries) if (e.name || !asns.has(e.asn)) asns.set(e.asn, e.name)
    return { name, meta, entries: asns.size, ranges: null, asns }
  }
  const ranges = new RangeSet(parsed.entries)
  return { name, meta, entries: ranges.entries, ranges, asns: null }
}

/** Loads every stored feed in `dir`; absent feeds are simply missing from the result. */
export async function loadFeeds(dir: string): Promise<LoadedFeeds> {
  const loaded = await Promise.all(FEED_NAMES.map((name) => loadFeed(dir, name)))
  const out: LoadedFeeds = {}
  for (const feed of loaded) if (feed) out[feed.name] = feed
  return out
}
