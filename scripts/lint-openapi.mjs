// Lints the OpenAPI document the server serves (GET /v1/openapi.json) with Redocly's `recommended`
// ruleset and Spectral's `spectral:oas`, and fails on any error or warning of either. Part of
// `npm test`. The document is written to a temp file from the compiled app (dist/scripts/openapi-document.js).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
const dir = mkdtempSync(join(tmpdir(), 'verdict-openapi-lint-'))
const file = join(dir, 'openapi.json')
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }

/** Runs a linter with JSON output; its exit status only says "problems found", which is counted here. */
function run(cmd, args) {
  const out = spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (out.error) throw out.error
  try {
    return JSON.parse(out.stdout)
  } catch {
    throw new Error(`${cmd} did not answer JSON:\n${out.stdout}\n${out.stderr}`)
  }
}

let failed = false
try {
  execFileSync(process.execPath, [join(root, 'scripts', 'ensure-build.mjs')], { stdio: 'inherit' })
  execFileSync(process.execPath, [join(root, 'dist', 'scripts', 'openapi-document.js'), file], {
    stdio: 'inherit',
  })

  const redocly = run(bin('redocly'), ['lint', '--extends', 'recommended', '--format', 'json', file])
  const { errors, warnings } = redocly.totals
  process.stdout.write(`redocly (recommended): ${errors} errors, ${warnings} warnings\n`)
  for (const p of redocly.problems) {
    const where = p.location?.[0]?.pointer ?? ''
    process.stdout.write(`  ${p.severity} ${p.ruleId} ${where}: ${p.message}\n`)
  }

  const spectral = run(bin('spectral'), [
    'lint',
    '--ruleset',
    join(root, 'lint', 'spectral.yaml'),
    '--format',
    'json',
    '--quiet',
    file,
  ])
  const count = (severity) => spectral.filter((r) => r.severity === severity).length
  process.stdout.write(`spectral (spectral:oas): ${count(0)} errors, ${count(1)} warnings\n`)
  for (const r of spectral) process.stdout.write(`  ${r.code} ${r.path.join('.')}: ${r.message}\n`)

  failed = errors + warnings + spectral.length > 0
} finally {
  rmSync(dir, { recursive: true, force: true })
}
if (failed) {
  process.stderr.write('lint:openapi: the OpenAPI document has lint problems (above)\n')
  process.exit(1)
}
