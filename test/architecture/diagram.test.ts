import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SCRIPT = join(ROOT, 'scripts', 'architecture-diagram.mjs')

function check(doc?: string): Promise<{ code: number; stderr: string }> {
  const args = [SCRIPT, '--check', ...(doc ? ['--doc', doc] : [])]
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd: ROOT }, (err, _out, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    )
  })
}

describe('the import diagram of docs/architecture.md', () => {
  it('is the one dependency-cruiser draws from the code today', async () => {
    const { code, stderr } = await check()
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
    expect(doc).toContain('services_decisions --> scoring')
    expect(doc).toContain('store_index_ts --> store_engine')
  }, 120_000)

  it('is reported stale when an arrow is missing (self-check of the checker)', async () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'verdict-diagram-')), 'architecture.md')
    const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
    writeFileSync(copy, page.replace('  services_decisions --> scoring\n', ''))
    const { code, stderr } = await check(copy)
    expect(code).toBe(1)
    expect(stderr).toContain('stale')
  }, 120_000)
})
