import { afterEach, describe, expect, it } from 'vitest'
import { SharedRedis } from '../../src/redis/connection.js'
import { RedisLimiter } from '../../src/redis/limiter.js'
import { RateLimiter } from '../../src/services/runtime/rate-limiter.js'
import { eventually } from '../helpers/app.js'
import { REDIS_URL, redisAvailable, testPrefix } from '../helpers/redis.js'
import { canRunRedisServer, freePort, OwnRedis } from '../helpers/redis-server.js'

const T0 = Date.UTC(2026, 10, 23, 12, 0, 30)
const haveRedis = await redisAvailable()
const haveServer = await canRunRedisServer()
if (!haveServer && process.env['VERDICT_REQUIRE_REDIS'] === '1') throw new Error('redis-server is required')

const open: SharedRedis[] = []
const connect = async (url: string, prefix: string) => {
  const r = new SharedRedis(url, prefix)
  open.push(r)
  for (let i = 0; i < 100 && !r.ready; i++) await new Promise((res) => setTimeout(res, 20))
  return r
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()))
})

describe.skipIf(!haveRedis)('rate limits shared through Redis', () => {
  it('two nodes share one budget, however unevenly they are hit, also when concurrent', async () => {
    const prefix = testPrefix()
    const redis = await connect(REDIS_URL, prefix)
    const a = new RedisLimiter(redis, 2)
    const b = new RedisLimiter(await connect(REDIS_URL, prefix), 2)
    // 70 hits on A and 10 on B: one shared budget allows 60; per-node shares (30 each) would allow 40.
    let allowed = 0
    for (let i = 0; i < 80; i++) {
      const r = await (i % 8 === 0 ? b : a).hit('key:k1', 60, T0)
      expect(r.limit).toBe(60)
      if (r.allowed) allowed++
    }
    expect(allowed).toBe(60)
    // The budget lives in Redis, under the deployment's prefix.
    expect(Number(await redis.client.get(redis.key('rl', 'key:k1')))).toBeGreaterThan(T0)
    const results = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (i % 8 === 0 ? b : a).hit('key:k2', 60, T0)),
    )
    expect(results.filter((r) => r.allowed)).toHaveLength(60)
  })

  it('answers exactly what the in-process GCRA answers, headers included, whichever node is asked', async () => {
    const prefix = testPrefix()
    // Two nodes: a node's fallback share (half the limit) or its own memory would answer differently.
    const nodes = [
      new RedisLimiter(await connect(REDIS_URL, prefix), 2),
      new RedisLimiter(await connect(REDIS_URL, prefix), 2),
    ]
    const local = new RateLimiter()
    // 119_990 after a budget spent at 120_000: a moment behind, still spent; an hour back: afresh.
    const times = [
      0, 0, 0, 0, 5_000, 19_999, 20_000, 20_001, 45_000, 120_000, 120_000, 120_000, 119_990, -3_600_000,
      -3_600_000,
    ]
    let n = 0
    for (const limit of [3, 7, 240]) {
      for (const dt of times) {
        const bucket = `b${limit}`
        const node = nodes[n++ % 2]!
        expect(await node.hit(bucket, limit, T0 + dt)).toEqual(local.hit(bucket, limit, T0 + dt))
      }
    }
  })

  it('a budget spent on one node stays spent for a node whose clock is a moment behind', async () => {
    const prefix = testPrefix()
    const a = new RedisLimiter(await connect(REDIS_URL, prefix), 2)
    const b = new RedisLimiter(await connect(REDIS_URL, prefix), 2)
    const local = new RateLimiter()
    for (let i = 0; i < 10; i++) {
      expect(await a.hit('key:skew', 10, T0 + 5)).toEqual(local.hit('key:skew', 10, T0 + 5))
    }
    // B's clock reads 1 ms earlier (or its request was stamped before A's): the bucket is more than a
    // window ahead of it, which used to start it afresh and allow an 11th request of 10.
    const late = await b.hit('key:skew', 10, T0 + 4)
    expect(late).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60, retryAfterSeconds: 6 })
    expect(late).toEqual(local.hit('key:skew', 10, T0 + 4))
    expect((await b.hit('key:skew', 10, T0 - 59_000)).allowed).toBe(false)
    expect((await a.hit('key:skew', 10, T0 + 5)).allowed).toBe(false)
  })

  it('peeks at a budget shared by every node without spending it, exactly as the in-process GCRA', async () => {
    const prefix = testPrefix()
    const a = new RedisLimiter(await connect(REDIS_URL, prefix), 2)
    const b = new RedisLimiter(await connect(REDIS_URL, prefix), 2)
    const local = new RateLimiter()
    expect(await b.peek('sign-in:x', 3, T0)).toEqual(local.peek('sign-in:x', 3, T0))
    for (let i = 0; i < 3; i++) {
      // A peek on either node counts nothing: three hits still fit after any number of peeks.
      expect((await (i % 2 ? a : b).peek('sign-in:x', 3, T0)).allowed).toBe(true)
      expect(await a.hit('sign-in:x', 3, T0)).toEqual(local.hit('sign-in:x', 3, T0))
    }
    // The hits made through A are what B sees.
    const seen = await b.peek('sign-in:x', 3, T0 + 1_000)
    expect(seen).toEqual(local.peek('sign-in:x', 3, T0 + 1_000))
    expect(seen).toMatchObject({ allowed: false, remaining: 0 })
    expect(seen.retryAfterSeconds).toBeGreaterThan(0)
    expect((await b.peek('sign-in:x', 3, T0 + 20_000)).allowed).toBe(true)
  })

  it('keeps buckets and prefixes apart, while nodes of one prefix share', async () => {
    const prefix = testPrefix()
    const one = new RedisLimiter(await connect(REDIS_URL, prefix), 1)
    const oneAgain = new RedisLimiter(await connect(REDIS_URL, prefix), 1)
    const two = new RedisLimiter(await connect(REDIS_URL, testPrefix()), 1)
    expect((await one.hit('key:a', 1, T0)).allowed).toBe(true)
    expect((await one.hit('key:a', 1, T0)).allowed).toBe(false)
    // Another node of the same deployment sees the spent bucket (its own memory would not).
    expect((await oneAgain.hit('key:a', 1, T0)).allowed).toBe(false)
    expect((await one.hit('key:b', 1, T0)).allowed).toBe(true)
    expect((await two.hit('key:a', 1, T0)).allowed).toBe(true)
  })
})

describe.skipIf(!haveServer)('when Redis is down', () => {
  it('limits per node (limit / nodes) without waiting, reports why, and shares again once Redis is back', async () => {
    const server = new OwnRedis(await freePort())
    await server.start()
    try {
      const redis = await connect(server.url, testPrefix())
      const limiter = new RedisLimiter(redis, 4)
      expect(redis.problem).toBeNull()
      expect((await limiter.hit('key:x', 40, T0)).limit).toBe(40)

      await server.stop()
      expect(await eventually(() => !redis.ready, 5000, 20)).toBe(true)
      expect(redis.problem).not.toBeNull()
      // Per node: 40 / 4 nodes = 10 (a fresh local bucket; what Redis counted is not known here).
      const down = await Promise.all(Array.from({ length: 12 }, () => limiter.hit('key:y', 40, T0)))
      expect(down.filter((r) => r.allowed)).toHaveLength(10)
      expect(down[0]?.limit).toBe(10)

      await server.start()
      expect(await eventually(() => redis.ready, 8000, 20)).toBe(true)
      expect(redis.problem).toBeNull()
      const back = await limiter.hit('key:z', 40, T0)
      expect(back).toMatchObject({ allowed: true, limit: 40, remaining: 39 })
    } finally {
      await server.stop()
    }
  }, 20_000)

  it('a Redis that never answered leaves every request limited locally', async () => {
    const redis = new SharedRedis(`redis://127.0.0.1:${await freePort()}/0`, testPrefix())
    open.push(redis)
    const limiter = new RedisLimiter(redis, 2)
    const r = await limiter.hit('key:q', 10, T0)
    expect(r).toMatchObject({ allowed: true, limit: 5, remaining: 4 })
    expect(redis.problem).not.toBeNull()
    // A peek reads the same local share: four more hits fit, not nine.
    expect(await limiter.peek('key:q', 10, T0)).toMatchObject({ allowed: true, limit: 5, remaining: 3 })
    for (let i = 0; i < 4; i++) await limiter.hit('key:q', 10, T0)
    expect((await limiter.peek('key:q', 10, T0)).allowed).toBe(false)
  })
})
