import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { skipUnless } from '../helpers/capabilities.js'
import { OwnPostgres, ownPostgresMissing } from '../helpers/own-postgres.js'
import { runCliAsync, startServer } from '../helpers/processes.js'
import { freePort } from '../helpers/redis-server.js'

const SECRET = 'storage-failure-secret-0123456789abcdefgh'

async function score(url: string, apiKey: string, i: number) {
  const res = await fetch(`${url}/v1/score`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'signup', user_id: `user-${i}`, email: `person${i}@example.com` }),
  })
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { error?: string },
  }
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, tries = 200): Promise<T> {
  let v = await what()
  for (let i = 0; i < tries && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 100))
    v = await what()
  }
  return v
}

/** A small filesystem of the test's own, so filling it up harms nothing else; or why none can be mounted. */
function smallDisk(): { dir: string; release: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-full-'))
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { encoding: 'utf8' })
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    return `mount -t tmpfs failed: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`
  }
  return {
    dir,
    release: () => {
      spawnSync('umount', [dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

describe('storage failures answer 503 and recover by themselves', () => {
  // Set up here, not at collection: a tmpfs of the test's own and a private PostgreSQL on a free port.
  let disk: { dir: string; release: () => void } | undefined
  let diskMissing: string | null = null
  let own: OwnPostgres | undefined
  let ownMissing: string | null = null
  beforeAll(async () => {
    const d = smallDisk()
    if (typeof d === 'string') diskMissing = d
    else disk = d
    ownMissing = ownPostgresMissing()
    if (ownMissing === null) own = OwnPostgres.create(await freePort())
  })
  afterAll(() => {
    disk?.release()
    own?.destroy()
  })

  it('SQLite: a full disk answers 503 with Retry-After, never 500, and scoring resumes when space returns', async (ctx) => {
    skipUnless(ctx, 'tmpfs', diskMissing)
    const { dir } = disk!
    const env = { DATABASE_URL: `sqlite:${join(dir, 'data', 'verdict.db')}`, VERDICT_SECRET: SECRET }
    mkdirSync(join(dir, 'data'))
    const created = await runCliAsync(['tenants', 'create', '--name', 'full', '--rate-limit', '100000'], env)
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string }
    const server = await startServer(env)
    try {
      expect((await score(server.url, apiKey, 0)).status).toBe(200)
      // Fill the disk to the last block.
      const filler = join(dir, 'filler')
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' })
      const answers = []
      for (let i = 1; i <= 40; i++) answers.push(await score(server.url, apiKey, i))
      const statuses = new Set(answers.map((a) => a.status))
      expect(
        [...statuses].every((s) => s === 200 || s === 503),
        JSON.stringify([...statuses]),
      ).toBe(true)
      const refused = answers.filter((a) => a.status === 503)
      expect(refused.length).toBeGreaterThan(0)
      expect(refused[0]!.retryAfter).not.toBeNull()
      expect(refused[0]!.body.error).toContain('unavailable')
      rmSync(filler)
      const back = await until(
        () => score(server.url, apiKey, 1000),
        (a) => a.status === 200,
      )
      expect(back.status).toBe(200)
      expect(server.alive()).toBe(true)
    } finally {
      await server.stop()
    }
  })

  it('PostgreSQL restarted mid-run: 503 with Retry-After while it is down, never a hang, then 200 again', async (ctx) => {
    skipUnless(ctx, 'own-postgres', ownMissing)
    const pg = own!
    pg.start()
    const env = { DATABASE_URL: pg.url, VERDICT_SECRET: SECRET }
    const created = await runCliAsync(
      ['tenants', 'create', '--name', 'restart', '--rate-limit', '100000'],
      env,
    )
    expect(created.status, created.stderr).toBe(0)
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string }
    const server = await startServer(env)
    try {
      expect((await score(server.url, apiKey, 0)).status).toBe(200)
      pg.stop()
      const down = await score(server.url, apiKey, 1)
      expect(down.status).toBe(503)
      expect(down.retryAfter).not.toBeNull()
      const health = (await (await fetch(`${server.url}/v1/health`)).json()) as { status: string }
      expect(health.status).not.toBe('ok')
      pg.start()
      const back = await until(
        () => score(server.url, apiKey, 2),
        (a) => a.status === 200,
      )
      expect(back.status).toBe(200)
      const events = await fetch(`${server.url}/v1/events?limit=5`, { headers: { 'x-api-key': apiKey } })
      expect(((await events.json()) as { total: number }).total).toBe(2)
    } finally {
      await server.stop()
    }
  }, 120_000)
})
