// Bundles the browser beacon (beacon/src) into dist/beacon: verdict.mjs (ES module), verdict.js (classic
// script exposing the global `Verdict`), both minified, plus manifest.json {version, sizeGzip, ...}.
// The version is a content hash, for the versioned URL the server serves with a long cache.
// The same two files and their types (beacon/types) also go to beacon/dist, the @verdict/beacon package.
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { rolldown } from 'rolldown'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'beacon')
const pkg = join(root, 'beacon', 'dist')

const targets = [
  { entry: 'entry-module.ts', file: 'verdict.mjs', format: 'es' },
  { entry: 'entry-classic.ts', file: 'verdict.js', format: 'iife', name: 'Verdict' },
]

async function bundle({ entry, format, name }) {
  const build = await rolldown({
    input: join(root, 'beacon', 'src', entry),
    platform: 'browser',
    tsconfig: join(root, 'beacon', 'tsconfig.json'),
    transform: { target: 'es2020' },
    logLevel: 'warn',
  })
  try {
    const { output } = await build.generate({ format, name, minify: true, codeSplitting: false })
    return output[0].code
  } finally {
    await build.close()
  }
}

mkdirSync(out, { recursive: true })
mkdirSync(pkg, { recursive: true })
const hash = createHash('sha256')
const sizes = {}
for (const t of targets) {
  const code = await bundle(t)
  writeFileSync(join(out, t.file), code)
  writeFileSync(join(pkg, t.file), code)
  hash.update(code)
  sizes[t.file] = gzipSync(code, { level: 9 }).length
}
const manifest = {
  version: hash.digest('hex').slice(0, 16),
  // The budget applies to the larger of the two files (the classic script, served at /v1/beacon.js).
  sizeGzip: Math.max(...Object.values(sizes)),
  files: sizes,
}
for (const types of ['verdict.d.ts', 'global.d.ts'])
  copyFileSync(join(root, 'beacon', 'types', types), join(pkg, types))
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
process.stderr.write(`verdict: beacon ${manifest.version} built, ${manifest.sizeGzip} bytes gzipped\n`)
