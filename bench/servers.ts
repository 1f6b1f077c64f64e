/**
 * Servers the benchmark drives, each in its own process so the load generator does not share a core
 * with them: `echo` is a bare Fastify validated JSON echo (the reference), `verdict` is the real app
 * on the SQLite file or PostgreSQL schema the parent names. Talks to the parent over the IPC channel
 * (see http.ts) and exits when the parent goes away.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import { backgroundJobs, Scheduler } from '../src/jobs/index.js'
import { SharedRedis } from '../src/redis/connection.js'
import { RedisLimiter } from '../src/redis/limiter.js'
import { createTenant } from '../src/services/access/tenants.js'
import { openStore, type StorageTarget } from '../src/store/index.js'
import type { Clock } from '../src/util/clock.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'
import { Profiler, type StatementRow } from './profile.js'

export type ServerSpec =
  | { kind: 'echo' }
  | {
      kind: 'verdict'
      target: StorageTarget
      pgSchema?: string
      clockStartMs?: number
      /** Removed if the parent vanishes without cleaning up (the parent removes it otherwise). */
      scratchDir?: string
      /** Limits shared through this Redis (two-node mode), under this key prefix. */
      redis?: { url: string; prefix: string; nodes: number }
      /** Another node's tenant key: the node serves that tenant instead of creating one. */
      apiKey?: string
      /** Runs the background jobs and the webhook dispatcher as server.ts does (bench/idle.ts). */
      jobs?: boolean
    }

export type ToServer =
  | { type: 'start'; spec: ServerSpec }
  | { type: 'clock'; at: number }
  | { type: 'profile-start' }
  /** Ends the profile and writes it to `file`. */
  | { type: 'profile-stop'; file: string }
export type FromServer =
  | { type: 'ready'; port: number; apiKey: string }
  | { type: 'clock-ok' }
  | { type: 'profile-started' }
  | { type: 'profile'; statements: StatementRow[]; transactions: number }

function send(msg: FromServer): void {
  // With a callback a parent that is already gone is not an uncaught error; 'disconnect' handles it.
  if (process.connected) process.send?.(msg, undefined, undefined, () => {})
}

async function echo(): Promise<number> {
  const app = Fastify()
  app.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          properties: { event: { type: 'string', maxLength: 64 } },
          required: ['event'],
        },
      },
    },
    async (req) => req.body,
  )
  app.get('/echo', async () => ({ ok: true }))
  app.post(
    '/echo-score',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['event'],
          properties: {
            event: { type: 'string', minLength: 1, maxLength: 64 },
            user_id: { type: 'string', maxLength: 256 },
            ip: { type: 'string', maxLength: 45 },
            email: { type: 'string', maxLength: 320 },
            device_id: { type: 'string', maxLength: 256 },
            event_country: { type: 'string', maxLength: 8 },
            timezone: { type: 'string', maxLength: 64 },
            device: { type: 'object' },
          },
        },
      },
    },
    async (req) => req.body,
  )
  await app.listen({ port: 0, host: '127.0.0.1' })
  const addr = app.server.address()
  return typeof addr === 'object' && addr ? addr.port : 0
}

/**
 * The history mode records months of events within minutes, so the server reads a clock the parent
 * moves forward: system time plus an offset that only grows (never runs backwards).
 */
function benchClock(startMs: number | undefined): Clock & { moveTo(at: number): void } {
  let offset = startMs === undefined ? 0 : startMs - Date.now()
  return {
    now: () => Date.now() + offset,
    moveTo: (at) => {
      offset = Math.max(offset, at - Date.now())
    },
  }
}

async function verdict(
  spec: Extract<ServerSpec, { kind: 'verdict' }>,
): Promise<{ port: number; apiKey: string }> {
  const clock = benchClock(spec.clockStartMs)
  process.on('message', (m: ToServer) => {
    if (m.type !== 'clock') return
    clock.moveTo(m.at)
    send({ type: 'clock-ok' })
  })
  const store = await openStore(spec.target, spec.pgSchema ? { pgSchema: spec.pgSchema } : {})
  const profiler = new Profiler(store.db)
  process.on('message', async (m: ToServer) => {
    if (m.type === 'profile-start') {
      await profiler.start()
      send({ type: 'profile-started' })
    } else if (m.type === 'profile-stop') {
      const r = await profiler.stop()
      writeFileSync(m.file, r.profile)
      send({ type: 'profile', statements: r.statements, transactions: r.transactions })
    }
  })
  const dns = await startBenchDns()
  const intel = await loadIntel({
    feedsDir: loadSettings().feeds.dir,
    email: { mx: { servers: [dns.server] } },
  })
  const redis = spec.redis ? new SharedRedis(spec.redis.url, spec.redis.prefix) : null
  for (let i = 0; redis && !redis.ready && i < 200; i++) await new Promise((r) => setTimeout(r, 10))
  if (redis && !redis.ready) throw new Error(`Redis not reachable at ${spec.redis?.url}`)
  const app = await buildApp({
    store,
    clock,
    hasher: new Hasher('bench-secret'),
    intel,
    ...(redis && spec.redis ? { limiter: new RedisLimiter(redis, spec.redis.nodes) } : {}),
  })
  const apiKey =
    spec.apiKey ??
    (
      await createTenant(store, clock, {
        name: 'bench',
        rateLimit: 1_000_000_000,
        monthlyQuota: 1_000_000_000,
      })
    ).apiKey
  if (spec.jobs) {
    const settings = loadSettings()
    const { asnRates, ja4Signatures } = app.services
    // Each run's wall time on stderr: which job the idle CPU belongs to.
    const jobs = backgroundJobs({
      feedsReloadMs: settings.feeds.reloadMs,
      retentionDays: settings.retentionDays,
    }).map((job) => ({
      ...job,
      run: async (ctx: Parameters<typeof job.run>[0]) => {
        const t0 = performance.now()
        const took = () => `${(performance.now() - t0).toFixed(1)} ms`
        try {
          await job.run(ctx)
        } catch (err) {
          process.stderr.write(`  job ${job.name} failed after ${took()}: ${(err as Error).message}\n`)
          throw err
        }
        process.stderr.write(`  job ${job.name}: ${took()}\n`)
      },
    }))
    new Scheduler(jobs, { store, clock, intel, asnRates, ja4Signatures, log: app.log }).start()
    app.services.webhooks.log = app.log
    app.services.webhooks.start()
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const addr = app.server.address()
  return { port: typeof addr === 'object' && addr ? addr.port : 0, apiKey }
}

if (!process.send) {
  process.stderr.write('servers.js is started by bench/run.js (it needs the IPC channel)\n')
  process.exit(2)
}
let scratchDir: string | undefined
// Never outlive the benchmark, whatever way it ended.
process.on('disconnect', () => {
  if (scratchDir) rmSync(scratchDir, { recursive: true, force: true })
  process.exit(0)
})
process.once('message', async (m: ToServer) => {
  if (m.type !== 'start') return
  if (m.spec.kind === 'verdict') scratchDir = m.spec.scratchDir
  try {
    if (m.spec.kind === 'echo') send({ type: 'ready', port: await echo(), apiKey: '-' })
    else send({ type: 'ready', ...(await verdict(m.spec)) })
  } catch (err) {
    process.stderr.write(`bench server failed: ${(err as Error).stack}\n`)
    process.exit(1)
  }
})
