/** `--nodes`: what sharing limits through Redis costs, and two nodes on PostgreSQL against one. */
import { SharedRedis } from '../src/redis/connection.js'
import { RedisLimiter } from '../src/redis/limiter.js'
import { RateLimiter } from '../src/services/runtime/rate-limiter.js'
import { scoreLoad } from './engine.js'
import { type BenchServer, type Figures, row, startBenchServer } from './http.js'
import { sampleLockWaits } from './pg.js'

/** Sequential latency of one limit check, p50 and p99 in ms, over `n` checks. */
async function checkLatency(hit: (i: number) => unknown, n: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    await hit(i)
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  times.sort((a, b) => a - b)
  return { p50: times[n >> 1]!, p99: times[Math.floor(n * 0.99)]! }
}

async function limitCheckCost(redisUrl: string): Promise<void> {
  const redis = new SharedRedis(redisUrl, `bench_${Date.now()}`)
  for (let i = 0; !redis.ready && i < 200; i++) await new Promise((r) => setTimeout(r, 10))
  if (!redis.ready) throw new Error(`Redis not reachable at ${redisUrl}`)
  const shared = new RedisLimiter(redis, 1)
  const local = new RateLimiter()
  const hit = (l: { hit: RateLimiter['hit'] | RedisLimiter['hit'] }) => (i: number) =>
    l.hit(`key:${i % 100}`, 1_000_000, Date.now())
  await checkLatency(hit(shared), 2_000)
  const r = await checkLatency(hit(shared), 20_000)
  const l = await checkLatency(hit(local), 20_000)
  console.log(
    `limit check, in process        p50 ${l.p50.toFixed(3)} ms   p99 ${l.p99.toFixed(3)} ms\n` +
      `limit check, Redis (one script) p50 ${r.p50.toFixed(3)} ms   p99 ${r.p99.toFixed(3)} ms   ` +
      `added per request at p50: ${(r.p50 - l.p50).toFixed(3)} ms (target <= 0.3 ms)`,
  )
  await redis.close()
}

const sum = (a: Figures, b: Figures): Figures => ({
  reqPerSec: a.reqPerSec + b.reqPerSec,
  p50: Math.max(a.p50, b.p50),
  p99: Math.max(a.p99, b.p99),
  errors: a.errors + b.errors,
  non2xx: a.non2xx + b.non2xx,
  ok: a.ok + b.ok,
})

/** Rounds of one node against two; the order alternates so that drift (a growing schema, autovacuum) cancels. */
const ROUNDS = 3

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

/**
 * One node with in-process limits (the limit check's share), then rounds of one node with Redis limits
 * (50 connections) against two such nodes sharing the load (25 connections each), all on one fresh
 * PostgreSQL schema and the same two server processes, so that neither side is always measured on the
 * larger database or right after a start.
 */
export async function nodesFigures(opts: {
  pgUrl: string
  pgSchema: string
  redisUrl: string
  seconds: number
  started: (s: Promise<BenchServer>) => Promise<BenchServer>
  release: (count: number) => Promise<void>
}): Promise<void> {
  console.log('\nseveral nodes (PostgreSQL; limits shared through Redis)')
  await limitCheckCost(opts.redisUrl)
  const target = { kind: 'postgres' as const, url: opts.pgUrl }
  const plain = await opts.started(startBenchServer({ kind: 'verdict', target, pgSchema: opts.pgSchema }))
  const one = await scoreLoad(plain, opts.seconds)
  console.log(row('one node, limits in process', one))
  await opts.release(1)
  const redis = { url: opts.redisUrl, prefix: `bench_${Date.now()}`, nodes: 2 }
  const node = () =>
    opts.started(
      startBenchServer({ kind: 'verdict', target, pgSchema: opts.pgSchema, redis, apiKey: plain.apiKey }),
    )
  const a = await node()
  const b = await node()
  const ones: number[] = []
  const twos: number[] = []
  const measureOne = async (round: number) => {
    const f = await scoreLoad(a, opts.seconds)
    ones.push(f.reqPerSec)
    console.log(row(`round ${round}: one node, limits in Redis`, f))
  }
  const measureTwo = async (round: number) => {
    const waits = await sampleLockWaits(opts.pgUrl)
    const [fa, fb] = await Promise.all([scoreLoad(a, opts.seconds, 25), scoreLoad(b, opts.seconds, 25)])
    const two = sum(fa!, fb!)
    twos.push(two.reqPerSec)
    console.log(row(`round ${round}: two nodes, limits in Redis`, two))
    console.log(`  ${await waits.stop()}`)
  }
  for (let round = 1; round <= ROUNDS; round++) {
    if (round % 2 === 1) {
      await measureOne(round)
      await measureTwo(round)
    } else {
      await measureTwo(round)
      await measureOne(round)
    }
  }
  const ratio = median(twos) / median(ones)
  console.log(
    `medians over ${ROUNDS} rounds: one node ${Math.round(median(ones))} req/s, two nodes ${Math.round(median(twos))} req/s\n` +
      `ratio two nodes / one node: ${ratio.toFixed(2)}   (target >= 1.00; both nodes and PostgreSQL share these 2 cores)`,
  )
  await opts.release(2)
}
