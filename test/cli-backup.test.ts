import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from './helpers/app.js'
import { PG_URL } from './helpers/pg.js'
import { firstStartKey, type RunningServer, runCliAsync, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-backup-'))
const dbFile = join(dir, 'verdict.db')
const env = { DATABASE_URL: `sqlite:${dbFile}` }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const PERSON = { event: 'signup', user_id: 'zz-restore-person-4411', email: 'Rhea.Quillfeather@gmail.com' }
const OTHER = { event: 'signup', user_id: 'other-person-1', email: 'someone.else@example.com' }

async function apiKeyOf(server: RunningServer): Promise<string> {
  return firstStartKey(server.stderr())!
}

const call = async (server: RunningServer, key: string, path: string, body: object) => {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const eventCount = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n
  } finally {
    db.close()
  }
}

describe('verdict backup and restore (SQLite)', () => {
  let key = ''
  const backup = join(dir, 'backup-1.db')

  it('takes a consistent online backup while the server scores under load', async () => {
    const server = await startServer(env)
    try {
      key = await apiKeyOf(server)
      for (const body of [PERSON, OTHER])
        expect((await call(server, key, '/v1/score', body)).status).toBe(200)
      // Scoring goes on during the whole backup.
      let stop = false
      let acked = 0
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const r = await call(server, key, '/v1/score', { event: 'login', user_id: `load-${i}` })
          if (r.status === 200) acked++
        }
      })()
      expect(await eventually(() => acked >= 20, 30_000, 10), `${acked} scores acknowledged in 30 s`).toBe(
        true,
      )
      const before = acked
      const res = await runCliAsync(['backup', backup], env)
      stop = true
      await load
      expect(res.status, res.stderr).toBe(0)
      const out = JSON.parse(res.stdout.trim())
      expect(out).toMatchObject({ backup, tenants: 1 })
      expect(out.pages).toBeGreaterThan(0)
      expect(res.stderr).toMatch(/backup: \d+\/\d+ pages \(100%\)/)
      // Everything acknowledged before the backup began is in it, and the copy is a sound database.
      expect(eventCount(backup)).toBeGreaterThanOrEqual(2 + before)
      const copy = new Database(backup, { readonly: true })
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
      copy.close()
      expect(readdirSync(dir).filter((f) => f.includes('.partial'))).toEqual([])
      // A second backup to the same file needs --force.
      const again = await runCliAsync(['backup', backup], env)
      expect(again.status).toBe(1)
      expect(again.stderr).toContain('--force')

      // After the backup, the person is erased. The restore must not bring them back.
      const forget = await call(server, key, '/v1/forget', {
        email: 'rheaquillfeather@gmail.com',
        user_id: PERSON.user_id,
      })
      expect(forget.status).toBe(200)
      expect((forget.body['deleted'] as { events: number }).events).toBe(1)
      // A running database is never overwritten.
      const busy = await runCliAsync(['restore', backup], env)
      expect(busy.status).toBe(1)
      expect(JSON.parse(busy.stderr.trim().split('\n')[0]!).error).toContain('in use')
    } finally {
      await server.stop()
    }
  }, 120_000)

  it('restores into the stopped database and erases again everyone erased since the backup', async () => {
    const eventsInBackup = eventCount(backup)
    const res = await runCliAsync(['restore', backup], env)
    expect(res.status, res.stderr).toBe(0)
    const out = JSON.parse(res.stdout.trim())
    expect(out).toMatchObject({ restored: dbFile, from: backup, suppressions: { carried: 2, reapplied: 2 } })
    expect(out.deleted.events).toBe(1)
    expect(eventCount(dbFile)).toBe(eventsInBackup - 1)
    expect(res.stderr).toContain('erased again')
    // No byte of the person is left in the restored files; the other person is there.
    for (const f of readdirSync(dir).filter((x) => x.startsWith('verdict.db'))) {
      expect(readFileSync(join(dir, f)).includes(Buffer.from(PERSON.user_id)), f).toBe(false)
    }
    const server = await startServer(env)
    try {
      const subject = await call(server, key, '/v1/subject', { user_id: PERSON.user_id })
      expect((subject.body['counts'] as { events: number }).events).toBe(0)
      expect(
        (await call(server, key, '/v1/subject', { user_id: OTHER.user_id })).body['counts'],
      ).toMatchObject({
        events: 1,
      })
      const sup = await fetch(`${server.url}/v1/suppressions`, { headers: { 'x-api-key': key } })
      expect(((await sup.json()) as { suppressions: unknown[] }).suppressions).toHaveLength(2)
    } finally {
      await server.stop()
    }
  })

  it('refuses a backup taken with another secret, a file that is not a verdict database, and PostgreSQL', async () => {
    const other = await runCliAsync(['restore', backup], {
      ...env,
      VERDICT_SECRET: 'another-secret-entirely-0123456789abcdef',
    })
    expect(other.status).toBe(1)
    expect(other.stderr).toContain('another server secret')
    const junk = join(dir, 'junk.db')
    writeFileSync(junk, 'not a database at all')
    const bad = await runCliAsync(['restore', junk], env)
    expect(bad.status).toBe(1)
    expect(bad.stderr).toContain('cannot be read as a verdict database')
    const pg = await runCliAsync(['backup', join(dir, 'pg.db')], {
      DATABASE_URL: PG_URL,
      VERDICT_SECRET: 'pg-secret-for-the-backup-test-0123456789',
    })
    expect(pg.status).toBe(1)
    expect(pg.stderr).toContain('pg_dump')
    expect(existsSync(join(dir, 'pg.db'))).toBe(false)
    const usage = await runCliAsync(['backup'], env)
    expect(usage.status).toBe(2)
  })
})
