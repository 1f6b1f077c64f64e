import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness, TEST_SECRET } from './helpers/build.js'
import { pgAvailable } from './helpers/pg.js'
import { runCliAsync } from './helpers/processes.js'

const hasPg = await pgAvailable()

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const PERSON = { event: 'signup', user_id: 'zz-audit-person-9911', email: 'Ottoline.Brackwater@gmail.com' }

describe('verdict audit export / apply across a PostgreSQL restore', () => {
  it.skipIf(!hasPg)(
    'a pg_dump taken before an erasure, restored, then the exported audit erases the person again',
    async () => {
      h = await build({ engine: 'postgres' })
      const t = await h.tenant()
      const post = (url: string, payload: object) =>
        h!.app.inject({ method: 'POST', url, headers: t.headers, payload })
      expect((await post('/v1/score', PERSON)).statusCode).toBe(200)
      expect((await post('/v1/score', { event: 'signup', user_id: 'stays' })).statusCode).toBe(200)
      const schema = (await h.store.db.get<{ s: string }>('SELECT current_schema() AS s'))!.s
      const db = h.pgUrl!
      const url = `${db}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
      const env = { DATABASE_URL: url, VERDICT_SECRET: TEST_SECRET }
      const dump = join(h.dir, 'before.dump')
      const dumped = spawnSync('pg_dump', ['--format=custom', `--schema=${schema}`, `--file=${dump}`, db])
      expect(dumped.status, dumped.stderr.toString()).toBe(0)

      // The erasure happens after the dump; its audit is exported before the restore.
      expect((await post('/v1/forget', { email: PERSON.email, user_id: PERSON.user_id })).statusCode).toBe(
        200,
      )
      const auditFile = join(h.dir, 'audit.json')
      const exported = await runCliAsync(['audit', 'export', auditFile], env)
      expect(exported.status, exported.stderr).toBe(0)
      expect(JSON.parse(exported.stdout)).toEqual({ exported: auditFile, rows: 2 })
      expect(readFileSync(auditFile, 'utf8')).not.toContain('Ottoline')

      // Restore the dump: the person is back.
      await h.store.db.run(`DROP SCHEMA ${schema} CASCADE`)
      const restored = spawnSync('pg_restore', ['--dbname', db, dump])
      expect(restored.status, restored.stderr.toString()).toBe(0)
      const count = async (user: string) =>
        Number(
          (await h!.store.db.get<{ n: number }>('SELECT count(*) AS n FROM events WHERE user_id = ?', [user]))
            ?.n,
        )
      expect(await count(PERSON.user_id)).toBe(1)

      const applied = await runCliAsync(['audit', 'apply', auditFile], env)
      expect(applied.status, applied.stderr).toBe(0)
      expect(JSON.parse(applied.stdout)).toMatchObject({
        carried: 2,
        reapplied: 2,
        skipped: 0,
        deleted: { events: 1 },
      })
      expect(await count(PERSON.user_id)).toBe(0)
      expect(await count('stays')).toBe(1)
      // Applying again finds nothing more to do.
      const again = JSON.parse((await runCliAsync(['audit', 'apply', auditFile], env)).stdout)
      expect(again).toMatchObject({ carried: 0, reapplied: 0 })

      // Another secret, or a file that is not an audit, is refused.
      const other = await runCliAsync(['audit', 'apply', auditFile], {
        ...env,
        VERDICT_SECRET: 'some-other-secret-0123456789abcdefghij',
      })
      expect(other.status).toBe(1)
      expect(other.stderr).toContain('another server secret')
      writeFileSync(join(h.dir, 'junk.json'), '{"rows": 5}')
      const junk = await runCliAsync(['audit', 'apply', join(h.dir, 'junk.json')], env)
      expect(junk.status).toBe(1)
      expect(junk.stderr).toContain('not a verdict audit file')
      expect((await runCliAsync(['audit', 'export', auditFile], env)).status).toBe(2)
    },
  )
})
