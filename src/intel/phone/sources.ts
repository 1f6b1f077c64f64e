import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'

const require = createRequire(import.meta.url)

export interface InstalledPackage {
  dir: string
  version: string | null
}

/** Where an installed data package lives and which version it is; null when it is not installed. */
export function installedPackage(name: string): InstalledPackage | null {
  try {
    const manifest = require.resolve(`${name}/package.json`)
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }
    return { dir: dirname(manifest), version: typeof version === 'string' ? version : null }
  } catch {
    return null
  }
}
