import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import {
  DEFAULT_FEED_MAX_BYTES,
  FEED_NAMES,
  FEEDS,
  type FeedName,
  type FeedUrls,
  feedUrlEnvVar,
  isFeedName,
} from './catalog.js'
import { mergeParsed, type ParsedFeed, parseFeedText, serializeFeed } from './formats.js'
import { type FeedMeta, readFeedMeta, writeFeed } from './store.js'

export type Progress = (line: string) => void

export interface FeedResult {
  name: FeedName
  status: 'updated' | 'skipped' | 'failed'
  /** Distinct entries now stored (for failed/skipped: what the previous data holds, or 0). */
  entries: number
  /** Lines skipped as malformed in the new data. */
  malformed: number
  source: string | null
  error?: string
}

export interface UpdateFeedsOptions {
  /**
   * URLs per feed: exactly these are used and a feed not listed is skipped. The server and the CLI pass
   * `settings.feeds.urls` (`VERDICT_FEED_<NAME>_URL` or the built-in upstream defaults).
   */
  urls: Partial<Record<FeedName, string | readonly string[] | null>>
  /** Where the feeds are stored (`settings.feeds.dir`). */
  dir: string
  /** Only these feeds (default: all). */
  names?: readonly FeedName[]
  progress?: Progress
  /** Per-download timeout, default 120 s. */
  timeoutMs?: number
  /** Per-URL size cap in bytes (`settings.feeds.maxBytes`); default 64 MiB. */
  maxBytes?: number
  /** Accept data that has less than half the entries of the stored copy. */
  force?: boolean
}

export interface ImportFeedOptions {
  /** Where the feeds are stored (`settings.feeds.dir`). */
  dir: string
  progress?: Progress
  /** Accept data that has less than half the entries of the stored copy. */
  force?: boolean
}

const noop: Progress = () => {}

/** Rejects data that is empty or mostly unparseable (an error page served with status 200, say). */
function validate(parsed: ParsedFeed, count: number): string | null {
  if (count === 0) return `no valid entries (${parsed.malformed} malformed lines)`
  if (parsed.malformed > count)
    return `mostly malformed: ${parsed.malformed} bad lines against ${count} entries`
  return null
}

function describeSkips(parsed: ParsedFeed): string {
  if (parsed.malformed === 0) return ''
  const eg = parsed.samples.length ? `, e.g. ${parsed.samples.map((s) => JSON.stringify(s)).join(' ')}` : ''
  return ` (${parsed.malformed} malformed lines skipped${eg})`
}

async function previousEntries(dir: string, name: FeedName): Promise<FeedMeta | null> {
  return readFeedMeta(dir, name).catch(() => null)
}

/**
 * A refresh that loses more than half of a feed is far more often a truncated download, a changed
 * upstream format or a tampered source than a real change, and it silently unflags addresses.
 */
function shrinkProblem(previous: FeedMeta | null, count: number): string | null {
  if (!previous || count * 2 >= previous.entries) return null
  return `would shrink the feed from ${previous.entries} to ${count} entries (more than half); run again with --force to accept`
}

async function store(
  dir: string,
  name: FeedName,
  parsed: ParsedFeed,
  source: string,
  progress: Progress,
  force: boolean,
): Promise<FeedResult> {
  const { text, count } = serializeFeed(parsed)
  const problem =
    validate(parsed, count) ?? (force ? null : shrinkProblem(await previousEntries(dir, name), count))
  if (problem) throw new Error(problem)
  await writeFeed(
    dir,
    { name, source, fetchedAt: Date.now(), entries: count, malformed: parsed.malformed },
    text,
  )
  progress(`${name}: stored ${count} entries${describeSkips(parsed)}`)
  return { name, status: 'updated', entries: count, malformed: parsed.malformed, source }
}

const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
}

/**
 * What went wrong with a download, for an operator offline or behind a proxy: fetch's own message is
 * only "fetch failed", and the cause (DNS, refused, timeout, TLS) sits in `err.cause`.
 */
export function describeFetchError(url: string, err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; hostname?: string; message?: string } }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `download of ${url} timed out after ${timeoutMs} ms`
  const cause = e?.cause
  const code = cause?.code
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') {
    const host = cause?.hostname ?? new URL(url).hostname
    return `download of ${url} failed: DNS lookup of ${host} failed (${code}): is there a network and a resolver?`
  }
  if (code) return `download of ${url} failed: ${CAUSES[code] ?? cause?.message ?? 'network error'} (${code})`
  return `download of ${url} failed: ${cause?.message ?? e?.message ?? String(err)}`
}

/** Fetches one URL, refusing bodies over `maxBytes` (counted after decompression) without buffering them. */
async function download(url: string, timeoutMs: number, maxBytes: number): Promise<string> {
  try {
    return await downloadBody(url, timeoutMs, maxBytes)
  } catch (err) {
    if (err instanceof FeedHttpError) throw err
    throw new Error(describeFetchError(url, err, timeoutMs))
  }
}

/** A refusal of ours (HTTP status, size): its message already names the URL. */
class FeedHttpError extends Error {}

async function downloadBody(url: string, timeoutMs: number, maxBytes: number): Promise<string> {
  const res = await fetch(url, {
    signal: AbortSignal.timeout(timeoutMs),
    headers: { 'user-agent': 'verdict-feeds', accept: 'text/plain, text/csv, application/json, */*' },
  })
  const tooLarge = () => new FeedHttpError(`${url} is larger than ${maxBytes} bytes (VERDICT_FEED_MAX_BYTES)`)
  if (!res.ok) {
    await res.body?.cancel().catch(() => {})
    throw new FeedHttpError(`HTTP ${res.status} from ${url}`)
  }
  const declared = Number(res.headers.get('content-length') ?? Number.NaN)
  if (declared > maxBytes && !res.headers.get('content-encoding')) {
    await res.body?.cancel().catch(() => {})
    throw tooLarge()
  }
  if (!res.body) return ''
  const chunks: Uint8Array[] = []
  let total = 0
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function urlList(value: string | readonly string[] | null | undefined): string[] {
  if (!value) return []
  return (typeof value === 'string' ? value.split(/\s+/) : [...value]).filter(Boolean)
}

/**
 * Downloads every feed that has a URL, validates it and replaces the stored copy. A feed without a URL
 * is skipped; a failed download or invalid data leaves the previous copy untouched. Never throws for a
 * single feed's failure: each outcome is in the result list and reported through `progress`.
 */
export async function updateFeeds(options: UpdateFeedsOptions): Promise<FeedResult[]> {
  const progress = options.progress ?? noop
  const dir = resolve(options.dir)
  const configured = options.urls
  const timeoutMs = options.timeoutMs ?? 120_000
  const maxBytes = options.maxBytes ?? DEFAULT_FEED_MAX_BYTES
  const results: FeedResult[] = []
  for (const name of options.names ?? FEED_NAMES) {
    const urls = urlList(configured[name])
    const previous = await previousEntries(dir, name)
    if (urls.length === 0) {
      progress(`${name}: no URL configured (set ${feedUrlEnvVar(name)}), skipped`)
      results.push({
        name,
        status: 'skipped',
        entries: previous?.entries ?? 0,
        malformed: 0,
        source: previous?.source ?? null,
      })
      continue
    }
    const source = urls.join(' ')
    try {
      const parts: ParsedFeed[] = []
      for (const url of urls) {
        progress(`${name}: downloading ${url}`)
        parts.push(parseFeedText(FEEDS[name], await download(url, timeoutMs, maxBytes)))
      }
      results.push(await store(dir, name, mergeParsed(parts), source, progress, options.force ?? false))
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err)
      const kept = previous
        ? `keeping previous data (${previous.entries} entries from ${new Date(previous.fetchedAt).toISOString()})`
        : 'no previous data'
      progress(`${name}: update failed: ${error}; ${kept}`)
      results.push({
        name,
        status: 'failed',
        entries: previous?.entries ?? 0,
        malformed: 0,
        source: previous?.source ?? null,
        error,
      })
    }
  }
  return results
}

/**
 * Imports a local file in the feed's upstream format (see docs/intel-ip.md) as the feed's new data.
 * Throws on an unknown feed, an unreadable file or data that fails validation; the previous copy
 * then stays in place.
 */
export async function importFeed(
  name: string,
  file: string,
  options: ImportFeedOptions,
): Promise<FeedResult> {
  if (!isFeedName(name)) throw new Error(`unknown feed "${name}" (expected one of: ${FEED_NAMES.join(', ')})`)
  const progress = options.progress ?? noop
  const dir = resolve(options.dir)
  const path = resolve(file)
  progress(`${name}: importing ${path}`)
  const text = await readFile(path, 'utf8')
  try {
    return await store(
      dir,
      name,
      parseFeedText(FEEDS[name], text),
      `file:${path}`,
      progress,
      options.force ?? false,
    )
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err)
    throw new Error(`${name}: import of ${path} rejected: ${error}`)
  }
}

export interface FeedStatus {
  name: FeedName
  description: string
  /** Whether stored data exists. */
  present: boolean
  source: string | null
  fetchedAt: number | null
  entries: number
  malformed: number
  /** URLs an update would use now (as configured). */
  urls: string[]
}

/** What is stored for each feed, from the metadata files only (cheap; nothing is parsed). */
export async function feedStatus(dir: string, urls: FeedUrls): Promise<FeedStatus[]> {
  const root = resolve(dir)
  return Promise.all(
    FEED_NAMES.map(async (name) => {
      const meta = await readFeedMeta(root, name)
      return {
        name,
        description: FEEDS[name].description,
        present: meta !== null,
        source: meta?.source ?? null,
        fetchedAt: meta?.fetchedAt ?? null,
        entries: meta?.entries ?? 0,
        malformed: meta?.malformed ?? 0,
        urls: urls[name],
      }
    }),
  )
}
