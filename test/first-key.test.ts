import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { firstStartKey, freePort, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-first-key-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const config = (url: string, key: string) => fetch(`${url}/v1/config`, { headers: { 'x-api-key': key } })

describe('the first-start API key', () => {
  it('is shown on stderr even with LOG_LEVEL=warn, and never written to a file unasked', async () => {
    const sub = mkdtempSync(join(dir, 'warn-'))
    const server = await startServer({
      DATABASE_URL: join(sub, 'verdict.db'),
      LOG_LEVEL: 'warn',
      PORT: String(await freePort()),
    })
    try {
      const key = firstStartKey(server.stderr())
      expect(key, server.logs()).toMatch(/^vk_[A-Za-z0-9]{40}$/)
      expect((await config(server.url, key!)).status).toBe(200)
      // How to get another one is said right there.
      expect(server.stderr()).toContain('verdict keys create --tenant default')
    } finally {
      await server.stop()
    }
    expect(existsSync(join(sub, 'verdict.first-key'))).toBe(false)
  })

  it('never reaches the structured log at info; the log says where it went', async () => {
    const sub = mkdtempSync(join(dir, 'info-'))
    const server = await startServer({ DATABASE_URL: join(sub, 'verdict.db') })
    try {
      const key = firstStartKey(server.stderr())!
      expect(key).toMatch(/^vk_/)
      expect(server.stdout()).not.toContain(key)
      expect(server.stdout()).not.toMatch(/vk_[A-Za-z0-9]{40}/)
      const line = server
        .stdout()
        .split('\n')
        .find((l) => l.includes('first start'))
      expect(line).toBeDefined()
      expect(JSON.parse(line!)).toMatchObject({ tenant: 'default' })
    } finally {
      await server.stop()
    }
    // A second start creates nothing and shows nothing.
    const again = await startServer({ DATABASE_URL: join(sub, 'verdict.db') })
    await again.stop()
    expect(firstStartKey(again.logs())).toBeUndefined()
  })

  it('VERDICT_FIRST_KEY_FILE=1 also writes it to a 0600 file beside the database', async () => {
    const sub = mkdtempSync(join(dir, 'file-'))
    const server = await startServer({ DATABASE_URL: join(sub, 'verdict.db'), VERDICT_FIRST_KEY_FILE: '1' })
    try {
      const file = join(sub, 'verdict.first-key')
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const key = readFileSync(file, 'utf8').trim()
      expect(key).toBe(firstStartKey(server.stderr()))
      expect((await config(server.url, key)).status).toBe(200)
      expect(server.stderr()).toContain(file)
    } finally {
      await server.stop()
    }
  })
})

describe('README', () => {
  it('says how to get a new key when the first one is lost', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')
    expect(readme).toContain('verdict keys create --tenant default')
    expect(readme).toContain('VERDICT_FIRST_KEY_FILE')
  })
})
