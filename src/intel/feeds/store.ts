import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FeedName } from './catalog.js'

/** Contents of `<name>.json` beside the stored `<name>.txt`. */
export interface FeedMeta {
  name: FeedName
  /** Where the data came from: URL(s) separated by spaces, or `file:<path>` for an import. */
  source: string
  /** When it was fetched or imported, epoch milliseconds. */
  fetchedAt: number
  /** Distinct entries stored. */
  entries: number
  /** Lines skipped as malformed while parsing the upstream data. */
  malformed: number
}

export function feedDataPath(dir: string, name: FeedName): string {
  return join(dir, `${name}.txt`)
}

export function feedMetaPath(dir: string, name: FeedName): string {
  return join(dir, `${name}.json`)
}

/** Writes through a temporary file in the same directory and renames it: readers never see half a file. */
async function writeAtomic(path: string, content: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFile(tmp, content, { mode: 0o644 })
    await rename(tmp, path)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
}

/**
 * Stores a feed's normalised content, then its metadata. The data file also starts with a comment
 * naming its source, so it stays self-describing if copied elsewhere.
 */
export async function writeFeed(dir: string, meta: FeedMeta, content: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  const header = `# verdict feed ${meta.name}; source: ${meta.source}; fetched: ${new Date(meta.fetchedAt).toISOString()}\n`
  await writeAtomic(feedDataPath(dir, meta.name), header + content)
  await writeAtomic(feedMetaPath(dir, meta.name), `${JSON.stringify(meta, null, 2)}\n`)
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT'
}

export async function readFeedMeta(dir: string, name: FeedName): Promise<FeedMeta | null> {
  try {
    const meta = JSON.parse(await readFile(feedMetaPath(dir, name), 'utf8')) as Partial<FeedMeta>
    if (typeof meta.fetchedAt !== 'number' || typeof meta.entries !== 'number') return null
    return {
      name,
      source: String(meta.source ?? ''),
      fetchedAt: meta.fetchedAt,
      entries: meta.entries,
      malformed: typeof meta.malformed === 'number' ? meta.malformed : 0,
    }
  } catch (err) {
    if (isMissing(err) || err instanceof SyntaxError) return null
    throw err
  }
}

/** The stored normalised text, or null when the feed has never been fetched or imported. */
export async function readFeedData(dir: string, name: FeedName): Promise<string | null> {
  try {
    return await readFile(feedDataPath(dir, name), 'utf8')
  } catch (err) {
    if (isMissing(err)) return null
    throw err
  }
}
