import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SCRIPT = join(ROOT, 'scripts', 'architecture-diagram.mjs')

function check(docs: string[]): Promise<{ code: number; stderr: string }> {
  const args = [SCRIPT, '--check', ...docs.flatMap((doc) => ['--doc', doc])]
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd: ROOT }, (err, _out, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    )
  })
}

describe('the import diagram of docs/architecture.md', () => {
  const page = join(ROOT, 'docs', 'architecture.md')
  // One run checks the page and a copy missing one arrow (drawing the graph is the slow part).
  const copy = join(mkdtempSync(join(tmpdir(), 'verdict-diagram-')), 'stale-copy.md')
  let result: { code: number; stderr: string }
  beforeAll(async () => {
    writeFileSync(copy, readFileSync(page, 'utf8').replace('  services_decisions --> scoring\n', ''))
    result = await check([page, copy])
  }, 120_000)

  it('is the one dependency-cruiser draws from the code today', () => {
    expect(result.stderr).not.toContain('docs/architecture.md')
    const doc = readFileSync(page, 'utf8')
    expect(doc).toContain('services_decisions --> scoring')
    expect(doc).toContain('store_index_ts --> store_engine')
  })

  it('is reported stale when an arrow is missing (self-check of the checker)', () => {
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(`${copy}: the import diagram is stale; run \`npm run diagram\`\n`)
  })
})
