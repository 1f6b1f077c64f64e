import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, startServer } from '../helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the configuration is validated at start', () => {
  it('the server refuses to start on a bad variable, naming it', async () => {
    const started = await startServer({
      DATABASE_URL: join(dir, 'server.db'),
      VERDICT_KEYLESS_RATE_LIMIT: '0',
      VERDICT_AI_PROVIDER: 'gemini',
    }).then(
      (server) => server,
      (err: Error) => err,
    )
    if (!(started instanceof Error)) {
      await started.stop()
      throw new Error('the server started')
    }
    expect(started.message).toMatch(/exited with 1/)
    expect(started.message).toMatch(
      /VERDICT_KEYLESS_RATE_LIMIT must be an integer >= 1, got "0"; VERDICT_AI_PROVIDER must be one of/,
    )
  })

  it('every CLI command refuses a bad variable before doing anything', () => {
    for (const args of [
      ['tenants', 'list'],
      ['feeds', 'status'],
    ]) {
      const r = runCli(args, { DATABASE_URL: join(dir, 'cli.db'), LOG_LEVEL: 'loud' })
      expect(r.status, args.join(' ')).toBe(1)
      expect(r.stdout).toBe('')
      expect(JSON.parse(r.stderr).error).toMatch(/^LOG_LEVEL must be one of .*, got "loud"$/)
    }
  })
})
