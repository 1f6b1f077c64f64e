// Bundles the console (console/src, TypeScript + Preact) into dist/console: index.html, and under
// assets/ one script and one stylesheet named by their content hash, plus manifest.json. The server
// (src/services/console/console-assets.ts) serves index.html revalidated and the hashed assets for a year.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { rolldown } from 'rolldown'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const src = join(root, 'console', 'src')
const out = join(root, 'dist', 'console')

const hash = (data) => createHash('sha256').update(data).digest('hex').slice(0, 12)

const build = await rolldown({
  input: join(src, 'main.tsx'),
  platform: 'browser',
  tsconfig: join(root, 'console', 'tsconfig.json'),
  transform: { target: 'es2020' },
  logLevel: 'warn',
})
let code
try {
  const { output } = await build.generate({ format: 'es', minify: true, codeSplitting: false })
  code = output[0].code
} finally {
  await build.close()
}
// The stylesheet is small and hand-written: whitespace and comments are all there is to drop.
const css = readFileSync(join(src, 'styles.css'), 'utf8')
  .replace(/\/\*[\s\S]*?\*\//g, '')
  .replace(/\s+/g, ' ')
  .replace(/\s*([{}:;,>])\s*/g, '$1')
  .trim()

const js = `app.${hash(code)}.js`
const style = `app.${hash(css)}.css`
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>verdict console</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The verdict console needs JavaScript.</noscript>
</body>
</html>
`
rmSync(out, { recursive: true, force: true })
mkdirSync(join(out, 'assets'), { recursive: true })
writeFileSync(join(out, 'assets', js), code)
writeFileSync(join(out, 'assets', style), css)
writeFileSync(join(out, 'index.html'), html)
const manifest = {
  version: hash(html),
  assets: [js, style],
  sizeGzip: { [js]: gzipSync(code, { level: 9 }).length, [style]: gzipSync(css, { level: 9 }).length },
}
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
process.stderr.write(
  `verdict: console ${manifest.version} built, ${manifest.sizeGzip[js]} + ${manifest.sizeGzip[style]} bytes gzipped\n`,
)
