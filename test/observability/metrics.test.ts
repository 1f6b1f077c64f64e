import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import type { JobContext } from '../../src/jobs/index.js'
import { Scheduler } from '../../src/jobs/index.js'
import { Metrics } from '../../src/observability/metrics.js'
import { SharedRedis } from '../../src/redis/connection.js'
import { RedisLimiter } from '../../src/redis/limiter.js'
import { redisNodes } from '../../src/services/runtime/cluster.js'
import { envFor, explainerFor, startFakeProvider } from '../ai/support/fake-provider.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { type Families, histogramCount, labelValues, parseExposition, total } from './scrape.js'

const TOKEN = 'operator-token-0123456789'
const hasPg = await pgAvailable()
const engines: Engine[] = hasPg ? ['sqlite', 'postgres'] : ['sqlite']

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

async function scrape(app: Harness['app']): Promise<Families> {
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toContain('text/plain')
  return parseExposition(res.body)
}

/** A varied stream: emails, addresses (v4 and v6), phones, user and device ids. */
const STREAM = [
  { event: 'signup', email: 'alice.private@example.com', ip: '203.0.113.77', user_id: 'user-aaa' },
  { event: 'login', email: 'bob.hidden@yopmail.com', ip: '2001:db8::1234', phone: '+44 20 7946 0555' },
  { event: 'checkout', email: 'carol+x@gmail.com', ip: '8.8.8.8', device_id: 'device-secret-1' },
  { event: 'signup', email: 'dave@mailinator.com', ip: '185.220.101.1', phone: '+1 202 555 0143' },
]

describe.each(engines)('GET /metrics on the main port (%s)', (engine) => {
  it('answers only the operator token, in constant-time comparison of digests', async () => {
    h = await build({ engine, observability: { metrics: new Metrics(), metricsToken: TOKEN } })
    expect((await h.app.inject({ url: '/metrics' })).statusCode).toBe(401)
    const wrong = await h.app.inject({
      url: '/metrics',
      headers: { authorization: 'Bearer nope-nope-nope-nope' },
    })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json().code).toBe('unauthorized')
    await scrape(h.app)
  })

  it('is not served on the main port without a token (404), and never needs an API key', async () => {
    h = await build({ engine, observability: { metrics: new Metrics() } })
    expect((await h.app.inject({ url: '/metrics' })).statusCode).toBe(404)
  })

  it('moves every request, score, reason, commit and 429 counter when their cause happens', async () => {
    h = await build({
      engine,
      keylessRateLimit: 2,
      observability: { metrics: new Metrics(), metricsToken: TOKEN },
    })
    const t = await h.tenant()
    const before = await scrape(h.app)
    expect(total(before, 'verdict_scores_total')).toBe(0)
    for (const payload of STREAM) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
      expect(res.statusCode).toBe(200)
    }
    const batch = await h.app.inject({
      method: 'POST',
      url: '/v1/batch/score',
      headers: t.headers,
      payload: { rows: STREAM.slice(0, 2) },
    })
    expect(batch.statusCode).toBe(200)
    // The keyless budget of 2 per minute: the third health call is refused.
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await h.app.inject({ url: '/v1/health' })).statusCode)
    expect(statuses).toEqual([200, 200, 429])

    const after = await scrape(h.app)
    expect(total(after, 'verdict_scores_total')).toBe(STREAM.length + 2)
    const verdicts = after
      .find((f) => f.name === 'verdict_scores_total')!
      .metrics.map((m) => m.labels!['verdict'])
    for (const v of verdicts) expect(['allow', 'review', 'block']).toContain(v)
    expect(total(after, 'verdict_reasons_total')).toBeGreaterThan(0)
    expect(histogramCount(after, 'verdict_group_commit_size', { outcome: 'ok' })).toBeGreaterThanOrEqual(2)
    expect(
      histogramCount(after, 'verdict_group_commit_duration_seconds', { outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(2)
    expect(
      total(after, 'verdict_http_requests_total', { route: '/v1/score', method: 'POST', status: '200' }),
    ).toBe(STREAM.length)
    expect(total(after, 'verdict_http_requests_total', { route: '/v1/health', status: '429' })).toBe(1)
    expect(total(after, 'verdict_http_requests_total', { route: '/v1/health', status: '200' })).toBe(2)
    expect(
      histogramCount(after, 'verdict_http_request_duration_seconds', { route: '/v1/score', method: 'POST' }),
    ).toBe(STREAM.length)
    // An unknown path is one `unmatched` series, never its URL.
    await h.app.inject({ url: '/no/such/path/alice@example.com' })
    const unmatched = await scrape(h.app)
    expect(total(unmatched, 'verdict_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1)
    // Node's process metrics and the scrape-time gauges are there.
    expect(total(unmatched, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(unmatched.find((f) => f.name === 'verdict_scoring_queue_depth')).toBeDefined()
    expect(unmatched.find((f) => f.name === 'verdict_event_loop_lag_seconds')).toBeDefined()
    expect(unmatched.find((f) => f.name === 'nodejs_eventloop_lag_seconds')).toBeDefined()
  })

  it('carries no email, address, phone, id or key in any label after a varied stream', async () => {
    h = await build({
      engine,
      observability: { metrics: new Metrics({ tenantLabels: true }), metricsToken: TOKEN },
    })
    const t = await h.tenant()
    for (const payload of STREAM)
      await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
    await h.app.inject({
      method: 'POST',
      url: '/v1/check/email',
      headers: t.headers,
      payload: { email: 'eve@example.org' },
    })
    await h.app.inject({ url: `/v1/devices/${encodeURIComponent('device-secret-1')}`, headers: t.headers })
    const values = labelValues(await scrape(h.app))
    expect(values.length).toBeGreaterThan(20)
    const secrets = [
      ...STREAM.flatMap((e) => Object.values(e)).filter(
        (v) => v !== 'signup' && v !== 'login' && v !== 'checkout',
      ),
      'eve@example.org',
      '7946',
      t.apiKey,
      t.keyId,
      TOKEN,
    ]
    for (const value of values) {
      expect(value).not.toMatch(/[^\s@()]+@[^\s@]+\.[a-z]{2,}/i)
      expect(value).not.toMatch(/\b\d{1,3}(\.\d{1,3}){3}\b/)
      for (const s of secrets) expect(value).not.toContain(s)
    }
    // Per-tenant labels (on here) carry the tenant id, nothing else of the tenant.
    expect(values).toContain(t.tenantId)
  })

  it('reports the database: pool connections on PostgreSQL, busy retries on SQLite', async () => {
    h = await build({ engine, observability: { metrics: new Metrics(), metricsToken: TOKEN } })
    const t = await h.tenant()
    if (engine === 'postgres') {
      await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload: STREAM[0]! })
      const families = await scrape(h.app)
      const pool = families.find((f) => f.name === 'verdict_db_pool_connections')!
      expect(pool.metrics.map((m) => m.labels!['state']).sort()).toEqual(['idle', 'in_use', 'waiting'])
      expect(total(families, 'verdict_db_pool_connections', { state: 'idle' })).toBeGreaterThan(0)
      return
    }
    expect(total(await scrape(h.app), 'verdict_sqlite_busy_retries_total')).toBe(0)
    // Another process holds the write lock for a moment: the score waits for it and then commits.
    const other = new Database(`${h.dir}/verdict.db`)
    other.prepare('BEGIN IMMEDIATE').run()
    const scoring = h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: STREAM[0]!,
    })
    await new Promise((r) => setTimeout(r, 150))
    other.prepare('ROLLBACK').run()
    other.close()
    expect((await scoring).statusCode).toBe(200)
    expect(total(await scrape(h.app), 'verdict_sqlite_busy_retries_total')).toBeGreaterThan(0)
  })
})

describe('metrics of the parts behind the Signals interface', () => {
  it('counts AI explanations: provider answers, cache hits and timeouts', async () => {
    const fake = await startFakeProvider('openai')
    const metrics = new Metrics()
    try {
      h = await build({
        explainer: explainerFor(envFor(fake, { VERDICT_AI_DEADLINE_MS: '300' }), { signals: metrics }),
        observability: { metrics, metricsToken: TOKEN },
      })
      const t = await h.tenant()
      fake.behave({
        kind: 'text',
        text: 'Several signals point to an automated signup from a hosting network.',
      })
      const score = (p: object) =>
        h!.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload: p })
      await score(STREAM[0]!)
      await score(STREAM[0]!)
      fake.behave({ kind: 'hang' })
      await score({ ...STREAM[3]!, event: 'other-pattern' })
      const families = await scrape(h.app)
      expect(total(families, 'verdict_ai_explanations_total', { outcome: 'ok' })).toBe(1)
      expect(total(families, 'verdict_ai_explanations_total', { outcome: 'cache_hit' })).toBe(1)
      expect(total(families, 'verdict_ai_explanations_total', { outcome: 'timeout' })).toBe(1)
    } finally {
      await fake.close()
    }
  })

  it('counts job runs and failures by job', async () => {
    const metrics = new Metrics()
    const log = { info: () => {}, warn: () => {} }
    const scheduler = new Scheduler(
      [
        { name: 'fine', scope: 'node', reads: '-', writes: '-', intervalMs: 60_000, run: async () => {} },
        {
          name: 'broken',
          scope: 'node',
          reads: '-',
          writes: '-',
          intervalMs: 60_000,
          run: async () => {
            throw new Error('boom')
          },
        },
      ],
      { log } as unknown as JobContext,
      { signals: metrics },
    )
    await scheduler.runNow('fine')
    await expect(scheduler.runNow('broken')).rejects.toThrow('boom')
    const families = parseExposition((await metrics.expose()).text)
    expect(total(families, 'verdict_job_runs_total', { job: 'fine', outcome: 'ok' })).toBe(1)
    expect(total(families, 'verdict_job_runs_total', { job: 'broken', outcome: 'failed' })).toBe(1)
    await scheduler.stop()
  })

  it('counts limiter fall-backs while Redis does not answer, and shows Redis down', async () => {
    const metrics = new Metrics()
    // Nothing listens on port 1: the limiter decides in memory.
    const redis = new SharedRedis('redis://127.0.0.1:1', 'verdict-test')
    try {
      const limiter = new RedisLimiter(redis, 2, metrics)
      await limiter.hit('ip:x', 10, Date.now())
      await limiter.hit('ip:x', 10, Date.now())
      h = await build({
        limiter,
        cluster: redisNodes('n1', redis, () => []),
        observability: { metrics, metricsToken: TOKEN },
      })
      const families = await scrape(h.app)
      expect(total(families, 'verdict_limiter_fallbacks_total')).toBe(2)
      expect(families.find((f) => f.name === 'verdict_redis_up')?.metrics[0]?.value).toBe('0')
    } finally {
      await redis.close()
    }
  })

  it('has no tenant label unless per-tenant labels are on', async () => {
    h = await build({ observability: { metrics: new Metrics(), metricsToken: TOKEN } })
    const t = await h.tenant()
    await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload: STREAM[0]! })
    const scores = (await scrape(h.app)).find((f) => f.name === 'verdict_scores_total')!
    for (const m of scores.metrics) expect(Object.keys(m.labels!)).toEqual(['verdict'])
  })
})
