import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runModuleScript, startServer } from './helpers/processes.js'
import { type StartLine, startLine } from './helpers/start-line.js'

const ROOT = join(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'verdict-secret-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `secretFile(file)` from the compiled code in a child process that first waits at the line. */
function resolveInChild(file: string, line: StartLine): Promise<string> {
  const script = `
    const { secretFile } = await import(${JSON.stringify(join(ROOT, 'dist', 'src', 'config', 'secret.js'))})
    ${line.childCode}
    process.stdout.write(secretFile(${JSON.stringify(file)}))`
  return runModuleScript(script)
}

/** Expects the server to refuse to start; one that does start is stopped again, then the test fails. */
async function expectRefused(env: Record<string, string>, message: RegExp): Promise<void> {
  const started = await startServer(env).then(
    (server) => server,
    (err: Error) => err,
  )
  if (!(started instanceof Error)) {
    await started.stop()
    throw new Error('the server started')
  }
  expect(started.message).toMatch(/exited with 1/)
  expect(started.message).toMatch(message)
}

describe('the generated secret file', () => {
  it('is created atomically: processes starting at once all read the same complete secret', async () => {
    for (let round = 0; round < 3; round++) {
      const sub = mkdtempSync(join(dir, 'race-'))
      const file = join(sub, 'verdict.secret')
      const line = startLine(dir)
      const children = Array.from({ length: 6 }, () => resolveInChild(file, line))
      await line.release(children)
      const secrets = await Promise.all(children)
      expect(new Set(secrets).size).toBe(1)
      expect(secrets[0]).toMatch(/^[A-Za-z0-9]{48}$/)
      expect(readFileSync(file, 'utf8').trim()).toBe(secrets[0])
      expect(statSync(file).mode & 0o777).toBe(0o600)
      // No temporary files are left behind.
      expect(readdirSync(sub)).toEqual(['verdict.secret'])
    }
  }, 240_000)

  it('an empty or cut-short secret file is refused rather than used', async () => {
    const sub = mkdtempSync(join(dir, 'empty-'))
    writeFileSync(join(sub, 'verdict.secret'), '\n', { mode: 0o600 })
    await expectRefused(
      { DATABASE_URL: join(sub, 'verdict.db') },
      /verdict\.secret holds fewer than 32 bytes/,
    )
  })
})

describe('VERDICT_SECRET at start', () => {
  it('an empty or short VERDICT_SECRET stops the server with a message naming it', async () => {
    for (const secret of ['', 'too-short-secret']) {
      const sub = mkdtempSync(join(dir, 'short-'))
      await expectRefused(
        { DATABASE_URL: join(sub, 'verdict.db'), VERDICT_SECRET: secret },
        /VERDICT_SECRET must be at least 32 bytes/,
      )
      // Refused before anything was created.
      expect(existsSync(join(sub, 'verdict.secret'))).toBe(false)
    }
  })
})

describe('VERDICT_SECRET on PostgreSQL', async () => {
  const { pgAvailable, createSchema, PG_URL } = await import('./helpers/pg.js')
  const hasPg = await pgAvailable()
  it.skipIf(!hasPg)('is required: without it the server refuses to start', async () => {
    const { schema, drop } = await createSchema()
    const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
    try {
      await expectRefused({ DATABASE_URL: url, VERDICT_SECRET: '' }, /VERDICT_SECRET/)
      await expectRefused({ DATABASE_URL: url }, /VERDICT_SECRET is required with PostgreSQL/)
    } finally {
      await drop()
    }
  })
})
