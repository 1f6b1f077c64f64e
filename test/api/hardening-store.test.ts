import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { StorageUnavailable } from '../../src/store/engine/db.js'
import { PostgresDb } from '../../src/store/engine/postgres.js'
import { build, type Harness } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
let h: Harness | undefined

afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('cost before quota on the scoring path', () => {
  it('refuses an over-quota score or batch before any DNS lookup', async () => {
    const { dns } = await testIntel()
    h = await build()
    const t = await h.tenant({ monthlyQuota: 2 })
    const post = (url: string, payload: object) =>
      h!.app.inject({ method: 'POST', url, headers: t.headers, payload })
    const first = await post('/v1/score', { event: 'signup', email: 'a@score-first.example.com' })
    expect(first.statusCode).toBe(200)
    expect(dns.count('score-first.example.com')).toBeGreaterThan(0)
    // One unit left: a two-row batch does not fit and costs nothing.
    const batch = await post('/v1/batch/score', {
      rows: [
        { event: 'signup', email: 'b@score-batch.example.com' },
        { event: 'signup', email: 'c@score-batch.example.com' },
      ],
    })
    expect(batch.statusCode).toBe(429)
    expect(batch.json().error).toMatch(/monthly quota of 2/)
    expect((await post('/v1/score', { event: 'signup', email: 'd@score-last.example.com' })).statusCode).toBe(
      200,
    )
    const over = await post('/v1/score', { event: 'signup', email: 'e@score-over.example.com' })
    expect(over.statusCode).toBe(429)
    expect(dns.count('score-batch.example.com')).toBe(0)
    expect(dns.count('score-over.example.com')).toBe(0)
    expect((await h.store.events.list(t.tenantId, { limit: 10, offset: 0 })).total).toBe(2)
  })
})

describe.each(['sqlite', 'postgres'] as const)('PUT /v1/config on %s', (engine) => {
  it.skipIf(engine === 'postgres' && !hasPg)(
    'validates against the stored config inside the write: concurrent updates never leave review above block',
    async () => {
      h = await build({ engine })
      const t = await h.tenant()
      const put = (thresholds: object) =>
        h!.app.inject({ method: 'PUT', url: '/v1/config', headers: t.headers, payload: { thresholds } })
      for (let round = 0; round < 10; round++) {
        // Each alone is valid against the defaults (review 40, block 70); together they would cross.
        const [a, b] = await Promise.all([put({ review: 60 + round }), put({ block: 50 - round })])
        const codes = [a.statusCode, b.statusCode].sort()
        expect(codes).toEqual([200, 400])
        const cfg = (await h.app.inject({ url: '/v1/config', headers: t.headers })).json()
        expect(cfg.effective.thresholds.review).toBeLessThanOrEqual(cfg.effective.thresholds.block)
        expect((await put({ review: 40, block: 70 })).statusCode).toBe(200)
      }
    },
  )
})

describe('erasure VACUUMs on PostgreSQL', () => {
  it.skipIf(!hasPg)(
    'are coalesced: one in flight, every further request joins the single next pass',
    async () => {
      const { schema, drop } = await createSchema()
      const db = new PostgresDb(PG_URL, { schema, max: 20 })
      const holder = new pg.Client({ connectionString: PG_URL })
      try {
        await db.exec('CREATE TABLE labels (id INTEGER)')
        await holder.connect()
        // A lock that conflicts with VACUUM's makes the first pass wait where we can count it.
        await holder.query('BEGIN')
        await holder.query(`LOCK TABLE ${schema}.labels IN SHARE UPDATE EXCLUSIVE MODE`)
        const passes = Array.from({ length: 10 }, () => db.reclaim(['labels']).catch((e: unknown) => e))
        // VACUUMs of this schema's table waiting for the lock (other tests may vacuum other schemas).
        const waiting = async () =>
          Number(
            (
              await holder.query(
                `SELECT COUNT(*) AS n FROM pg_locks WHERE relation = '${schema}.labels'::regclass AND NOT granted`,
              )
            ).rows[0].n,
          )
        let seen = 0
        for (let i = 0; i < 800 && seen === 0; i++) {
          seen = await waiting()
          if (seen === 0) await new Promise((r) => setTimeout(r, 25))
        }
        expect(seen).toBe(1)
        for (let i = 0; i < 20; i++) expect(await waiting()).toBeLessThanOrEqual(1)
        await holder.query('COMMIT')
        await Promise.all(passes)
      } finally {
        await holder.end().catch(() => {})
        await db.close()
        await drop()
      }
    },
  )
})

describe('PostgreSQL pool bounds', () => {
  it.skipIf(!hasPg)(
    'a statement past the statement timeout and an unreachable server fail as unavailable',
    async () => {
      const db = new PostgresDb(PG_URL, { statementTimeoutMs: 100 })
      try {
        await expect(db.get('SELECT pg_sleep(2) AS x')).rejects.toBeInstanceOf(StorageUnavailable)
        // The connection went back to the pool in working order.
        expect(await db.get<{ ok: number }>('SELECT 1 AS ok')).toEqual({ ok: 1 })
      } finally {
        await db.close()
      }
      const down = new PostgresDb('postgres://postgres@127.0.0.1:1/test', { connectTimeoutMs: 500 })
      try {
        await expect(down.tx(function* () {})).rejects.toBeInstanceOf(StorageUnavailable)
        expect(await down.ping()).toBe(false)
      } finally {
        await down.close()
      }
    },
  )
})
