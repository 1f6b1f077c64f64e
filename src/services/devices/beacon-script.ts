import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiError } from '../../errors.js'

/** A versioned URL never changes content: browsers keep it a year. */
export const IMMUTABLE = 'public, max-age=31536000, immutable'
/** The bare URL follows new builds: short, so a deployment reaches pages within minutes. */
export const SHORT = 'public, max-age=300'

export type BeaconBuild = 'script' | 'module'

interface Bundle {
  version: string
  files: Record<BeaconBuild, Buffer>
}

const FILES: Record<BeaconBuild, string> = { script: 'verdict.js', module: 'verdict.mjs' }

/**
 * dist/beacon (scripts/build-beacon.mjs) from wherever this module runs: src/services/devices under the
 * repository (tests) or dist/src/services/devices (the built server).
 */
function bundleDir(): string | undefined {
  const here = import.meta.dirname
  return [join(here, '..', '..', '..', 'dist', 'beacon'), join(here, '..', '..', '..', 'beacon')].find((d) =>
    existsSync(join(d, 'manifest.json')),
  )
}

let cached: Bundle | undefined

/** Read once per process: the build does not change under a running server. */
function bundle(): Bundle {
  if (cached) return cached
  const dir = bundleDir()
  if (!dir) throw new ApiError('not_found', 'the beacon library is not built (npm run build)')
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { version: string }
  cached = {
    version: manifest.version,
    files: { script: readFileSync(join(dir, FILES.script)), module: readFileSync(join(dir, FILES.module)) },
  }
  return cached
}

export interface BeaconScript {
  /** null when the caller's If-None-Match already names this content (304). */
  body: Buffer | null
  etag: string
  cacheControl: string
  version: string
}

/** The built library for GET /v1/beacon.js or .mjs, with its validator and cache lifetime. */
export function beaconScript(
  build: BeaconBuild,
  requestedVersion: string | undefined,
  ifNoneMatch: string | undefined,
): BeaconScript {
  const b = bundle()
  const etag = `"${b.version}-${build}"`
  const cacheControl = requestedVersion === b.version ? IMMUTABLE : SHORT
  const fresh = ifNoneMatch?.split(',').some((t) => t.trim() === etag) ?? false
  return { body: fresh ? null : b.files[build], etag, cacheControl, version: b.version }
}
