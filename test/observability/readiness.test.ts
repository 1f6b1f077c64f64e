import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { Metrics } from '../../src/observability/metrics.js'
import { Readiness } from '../../src/observability/readiness.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { OwnPostgres } from '../helpers/own-postgres.js'
import { pgAvailable } from '../helpers/pg.js'
import { parseExposition, total } from './scrape.js'

const hasPg = await pgAvailable()
const engines: Engine[] = hasPg ? ['sqlite', 'postgres'] : ['sqlite']

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const probe = async (app: Harness['app'], url: string) => {
  const res = await app.inject({ url })
  return { status: res.statusCode, body: res.json() as { status: string; reason?: string } }
}

describe.each(engines)('readiness and liveness on the main port (%s)', (engine) => {
  it('ready: 200, with no key and no rate limit (probes never get a 429)', async () => {
    h = await build({ engine, keylessRateLimit: 1 })
    for (let i = 0; i < 5; i++) {
      expect(await probe(h.app, '/readyz')).toEqual({ status: 200, body: { status: 'ready' } })
      expect(await probe(h.app, '/livez')).toEqual({ status: 200, body: { status: 'ok' } })
    }
    // The keyless budget is spent by the first health call, untouched by the probes.
    expect((await h.app.inject({ url: '/v1/health' })).statusCode).toBe(200)
    expect((await h.app.inject({ url: '/v1/health' })).statusCode).toBe(429)
  })

  it('503 while the process is starting or migrating, and from the start of shutdown', async () => {
    const readiness = new Readiness('migrating')
    h = await build({ engine, observability: { readiness } })
    expect(await probe(h.app, '/readyz')).toEqual({
      status: 503,
      body: { status: 'not_ready', reason: 'migrating' },
    })
    readiness.set('ready')
    expect((await probe(h.app, '/readyz')).status).toBe(200)
    readiness.set('stopping')
    expect(await probe(h.app, '/readyz')).toEqual({
      status: 503,
      body: { status: 'not_ready', reason: 'shutting_down' },
    })
    // Liveness says only that the event loop turns.
    expect((await probe(h.app, '/livez')).status).toBe(200)
  })

  it('503 while shedding load, and the refusal counter moves', async () => {
    const metrics = new Metrics()
    // A queue bound of 0 means every new request finds the queue "full": the process sheds.
    h = await build({
      engine,
      overload: { maxQueue: 0 },
      observability: { metrics, metricsToken: 'x'.repeat(16) },
    })
    const t = await h.tenant()
    expect(await probe(h.app, '/readyz')).toEqual({
      status: 503,
      body: { status: 'not_ready', reason: 'shedding' },
    })
    const refused = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: { event: 'signup' },
    })
    expect(refused.statusCode).toBe(503)
    const families = parseExposition((await metrics.expose()).text)
    expect(total(families, 'verdict_load_shed_total', { cause: 'queue' })).toBe(1)
    expect(total(families, 'verdict_http_requests_total', { route: '/v1/score', status: '503' })).toBe(1)
  })
})

describe('readiness while the database cannot take work', () => {
  it('SQLite: 503 while another process holds the write lock, 200 once it lets go', async () => {
    h = await build({ engine: 'sqlite' })
    expect((await probe(h.app, '/readyz')).status).toBe(200)
    const other = new Database(`${h.dir}/verdict.db`)
    other.prepare('BEGIN IMMEDIATE').run()
    try {
      expect(await probe(h.app, '/readyz')).toEqual({
        status: 503,
        body: { status: 'not_ready', reason: 'database_unavailable' },
      })
      expect((await probe(h.app, '/livez')).status).toBe(200)
    } finally {
      other.prepare('ROLLBACK').run()
      other.close()
    }
    expect((await probe(h.app, '/readyz')).status).toBe(200)
  })

  const own = hasPg ? OwnPostgres.create(55437) : null
  it.skipIf(!own)('PostgreSQL: 503 while the server is down, 200 once it is back', async () => {
    const pg = own!
    pg.start()
    try {
      h = await build({ pgUrl: pg.url })
      expect((await probe(h.app, '/readyz')).status).toBe(200)
      pg.stop()
      expect(await probe(h.app, '/readyz')).toEqual({
        status: 503,
        body: { status: 'not_ready', reason: 'database_unavailable' },
      })
      expect((await probe(h.app, '/livez')).status).toBe(200)
      pg.start()
      expect((await probe(h.app, '/readyz')).status).toBe(200)
    } finally {
      await h?.close().catch(() => {})
      h = undefined
      pg.destroy()
    }
  })
})
