// Builds dist/ with tsc when any TypeScript source is newer than the last build, and the browser beacon
// (dist/beacon) and the console (dist/console), served by the server at run time, when their sources are
// newer than their last build.
// Lets `npm start` and `npx verdict` work on a fresh clone without a separate build step.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// The newest source time seen *before* the last successful build: a file saved while tsc was running
// is newer than it, so the next call builds again (an output file's own mtime would hide that edit).
const stamp = join(root, 'dist', '.source-stamp')

function newest(dir) {
  let t = 0
  if (!existsSync(dir)) return t
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) t = Math.max(t, newest(p))
    else if (/\.(ts|tsx|css)$/.test(entry.name)) t = Math.max(t, statSync(p).mtimeMs)
  }
  return t
}

const built = existsSync(stamp) ? Number(readFileSync(stamp, 'utf8')) : 0
const sources = Math.max(
  newest(join(root, 'src')),
  newest(join(root, 'bench')),
  newest(join(root, 'scripts')),
  statSync(join(root, 'package.json')).mtimeMs,
)
if (sources > built) {
  process.stderr.write('verdict: compiling TypeScript…\n')
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
    {
      stdio: ['ignore', process.stderr, process.stderr],
      cwd: root,
    },
  )
  writeFileSync(stamp, String(sources))
  pruneStale()
}

/**
 * tsc never deletes output: after a source file moves or goes, its old .js would stay importable from
 * dist/ and a stale string path (a test's child script, an asset lookup) would still pass. Drop every
 * compiled file whose source is gone.
 */
function pruneStale() {
  for (const top of ['src', 'bench', 'scripts']) {
    const walk = (dir, srcDir) => {
      if (!existsSync(dir)) return
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const out = join(dir, entry.name)
        const source = join(srcDir, entry.name)
        if (entry.isDirectory()) {
          if (!existsSync(source)) rmSync(out, { recursive: true, force: true })
          else walk(out, source)
          continue
        }
        const base = entry.name.replace(/\.(js|js\.map|d\.ts|d\.ts\.map)$/, '')
        if (base === entry.name) continue
        if (!['.ts', '.tsx', '.d.ts'].some((ext) => existsSync(join(srcDir, base + ext)))) rmSync(out)
      }
    }
    walk(join(root, 'dist', top), join(root, top))
  }
}

// The beacon has its own stamp: its sources are beacon/src and its published types (beacon/types) plus
// the shared wire contract in src/beacon. Its output is dist/beacon (served) and beacon/dist (the package).
const beaconStamp = join(root, 'dist', 'beacon', '.source-stamp')
const beaconBuilt = existsSync(beaconStamp) ? Number(readFileSync(beaconStamp, 'utf8')) : 0
const beaconSources = Math.max(
  newest(join(root, 'beacon', 'src')),
  newest(join(root, 'beacon', 'types')),
  statSync(join(root, 'beacon', 'tsconfig.json')).mtimeMs,
  newest(join(root, 'src', 'beacon')),
  statSync(join(root, 'scripts', 'build-beacon.mjs')).mtimeMs,
  statSync(join(root, 'package.json')).mtimeMs,
)
if (
  beaconSources > beaconBuilt ||
  !existsSync(join(root, 'dist', 'beacon', 'manifest.json')) ||
  !existsSync(join(root, 'beacon', 'dist', 'verdict.d.ts'))
) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-beacon.mjs')], {
    stdio: ['ignore', process.stderr, process.stderr],
    cwd: root,
  })
  writeFileSync(beaconStamp, String(beaconSources))
}

// The console (dist/console) likewise, from console/src.
const consoleStamp = join(root, 'dist', 'console-stamp')
const consoleBuilt = existsSync(consoleStamp) ? Number(readFileSync(consoleStamp, 'utf8')) : 0
const consoleSources = Math.max(
  newest(join(root, 'console')),
  statSync(join(root, 'scripts', 'build-console.mjs')).mtimeMs,
  statSync(join(root, 'package.json')).mtimeMs,
)
if (consoleSources > consoleBuilt || !existsSync(join(root, 'dist', 'console', 'manifest.json'))) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-console.mjs')], {
    stdio: ['ignore', process.stderr, process.stderr],
    cwd: root,
  })
  writeFileSync(consoleStamp, String(consoleSources))
}
