import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeFetchError, updateFeeds } from '../../../src/intel/feeds/update.js'
import { freePort } from '../../helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-feed-errors-'))
let server: Server
let base = ''
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return // never answers: the client's deadline must fire
    res.statusCode = 503
    res.end('down for maintenance')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const addr = server.address()
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
  rmSync(dir, { recursive: true, force: true })
})

async function errorOf(url: string): Promise<string> {
  const [result] = await updateFeeds({ dir, urls: { tor: url }, names: ['tor'], timeoutMs: 300 })
  expect(result?.status).toBe('failed')
  return result?.error ?? ''
}

describe('a failed feed download names the cause and the URL', () => {
  it('connection refused', async () => {
    const url = `http://127.0.0.1:${await freePort()}/list.txt`
    const error = await errorOf(url)
    expect(error).toContain(url)
    expect(error).toMatch(/connection refused/)
    expect(error).not.toBe('fetch failed')
  })

  it('timeout', async () => {
    const error = await errorOf(`${base}/hang`)
    expect(error).toContain(`${base}/hang`)
    expect(error).toMatch(/timed out after 300 ms/)
  })

  it('HTTP status', async () => {
    const error = await errorOf(`${base}/gone`)
    expect(error).toContain(`${base}/gone`)
    expect(error).toMatch(/HTTP 503/)
  })

  it('DNS failure (the error undici raises for an unknown host)', () => {
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND feeds.example'), {
      code: 'ENOTFOUND',
      hostname: 'feeds.example',
    })
    const err = new TypeError('fetch failed', { cause })
    const text = describeFetchError('https://feeds.example/list.txt', err, 300)
    expect(text).toContain('https://feeds.example/list.txt')
    expect(text).toMatch(/DNS lookup of feeds\.example failed \(ENOTFOUND\)/)
  })
})

describe('README "Run it"', () => {
  it('says what the *_feed_not_loaded warnings mean and how to load feeds', async () => {
    const { readFileSync } = await import('node:fs')
    const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8')
    const runIt = readme.slice(readme.indexOf('## Run it'), readme.indexOf('## Console'))
    expect(runIt).toContain('_feed_not_loaded')
    expect(runIt).toContain('verdict feeds update')
  })
})
