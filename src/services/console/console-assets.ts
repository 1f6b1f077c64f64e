import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiError } from '../../errors.js'

/**
 * The console's built front end (dist/console, made by scripts/build-console.mjs at install time).
 * index.html names content-hashed assets, so it is revalidated on every load while the assets are
 * cached for a year.
 */

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

export const HTML_CACHE = 'no-cache'
export const ASSET_CACHE = 'public, max-age=31536000, immutable'

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}

interface Built {
  index: Buffer
  etag: string
  assets: Map<string, { body: Buffer; type: string }>
}

let cached: Built | undefined

function bundleDir(): string | undefined {
  const here = import.meta.dirname
  return [join(here, '..', '..', '..', 'dist', 'console'), join(here, '..', '..', '..', 'console')].find(
    (d) => existsSync(join(d, 'manifest.json')),
  )
}

/** Read once per process: the build does not change under a running server. */
function built(): Built {
  if (cached) return cached
  const dir = bundleDir()
  if (!dir) throw new ApiError('not_found', 'the console is not built (npm run build)')
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    version: string
    assets: string[]
  }
  const assets = new Map<string, { body: Buffer; type: string }>()
  for (const name of manifest.assets) {
    const ext = name.slice(name.lastIndexOf('.'))
    assets.set(name, {
      body: readFileSync(join(dir, 'assets', name)),
      type: TYPES[ext] ?? 'application/octet-stream',
    })
  }
  cached = { index: readFileSync(join(dir, 'index.html')), etag: `"${manifest.version}"`, assets }
  return cached
}

export function consoleIndex(ifNoneMatch: string | undefined): { body: Buffer | null; etag: string } {
  const b = built()
  const fresh = ifNoneMatch?.split(',').some((t) => t.trim() === b.etag) ?? false
  return { body: fresh ? null : b.index, etag: b.etag }
}

export function consoleAsset(name: string): { body: Buffer; type: string } {
  const a = built().assets.get(name)
  if (!a) throw new ApiError('not_found', `no console asset ${name}`)
  return a
}
