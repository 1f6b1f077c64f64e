import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const waiting = async (harness: Harness) => (await harness.store.compaction.pending()).map((p) => p.table)

describe('storage compaction after erasure', () => {
  it('has nothing to do on SQLite: the erasure itself leaves no bytes, so nothing is marked', async () => {
    h = await build()
    const t = await h.tenant()
    await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: { event: 'e', user_id: 'u1' },
    })
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/forget',
      headers: t.headers,
      payload: { user_id: 'u1' },
    })
    expect(res.json().storage).toBe('reclaimed')
    expect(await waiting(h)).toEqual([])
  })

  it.skipIf(!hasPg)(
    'on PostgreSQL leaves a table whose lock is held for its next run, and rewrites it then',
    async () => {
      h = await build({ engine: 'postgres' })
      const t = await h.tenant()
      await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'e', user_id: 'u1' },
      })
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/forget',
        headers: t.headers,
        payload: { user_id: 'u1' },
      })
      expect(res.json().storage).toBe('pending')
      expect(await waiting(h)).toContain('labels')
      const schema = (await h.store.db.get<{ s: string }>('SELECT current_schema() AS s'))?.s
      const other = new pg.Client({ connectionString: h.pgUrl! })
      await other.connect()
      try {
        // A long reader of `labels`: the rewrite cannot take the exclusive lock within its timeout.
        await other.query('BEGIN')
        await other.query(`LOCK TABLE "${schema}".labels IN ACCESS SHARE MODE`)
        await h.jobs.runNow('storage-compaction')
        const left = await waiting(h)
        expect(left).toEqual(['labels'])
        await other.query('COMMIT')
        await h.jobs.runNow('storage-compaction')
        expect(await waiting(h)).toEqual([])
      } finally {
        await other.end()
      }
    },
  )
})
