// Regenerates src/schema.ts from the document the server serves (built from the repository's
// src/, see scripts/openapi-document.ts at the root). Run from the repository: npm run generate
// --prefix clients/typescript.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { render } from './render.mjs'

const here = join(dirname(fileURLToPath(import.meta.url)), '..')
const root = join(here, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'verdict-client-'))
try {
  const file = join(dir, 'openapi.json')
  execFileSync(process.execPath, [join(root, 'scripts', 'ensure-build.mjs')], { stdio: 'inherit' })
  execFileSync(process.execPath, [join(root, 'dist', 'scripts', 'openapi-document.js'), file], {
    stdio: 'inherit',
  })
  writeFileSync(join(here, 'src', 'schema.ts'), await render(JSON.parse(readFileSync(file, 'utf8'))))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
