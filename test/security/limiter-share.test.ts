import { afterAll, describe, expect, it } from 'vitest'
import { SharedRedis } from '../../src/redis/connection.js'
import { RedisLimiter } from '../../src/redis/limiter.js'

/**
 * Issue 26, item 14: while Redis is away each node enforces its share of a limit, and the shares
 * never add up to more than the limit, however many nodes there are (some nodes get 0 and refuse).
 */
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0)
// Nothing listens on port 1: every node runs on its fallback.
const away: SharedRedis[] = []
afterAll(async () => {
  await Promise.all(away.map((r) => r.close()))
})
const nodesOf = (count: number) =>
  Array.from({ length: count }, () => {
    const r = new SharedRedis('redis://127.0.0.1:1/0', 'vt_away')
    away.push(r)
    return new RedisLimiter(r, count)
  })

describe('node shares while Redis is away', () => {
  it.each([
    [6, 5],
    [10, 5],
    [3, 5],
    [2, 5],
    [7, 10],
    [4, 60],
  ])('%i nodes together allow at most the limit of %i', async (count, limit) => {
    const nodes = nodesOf(count)
    expect(nodes.every((n) => !(n as unknown as { redis: SharedRedis }).redis.ready)).toBe(true)
    let allowed = 0
    for (const node of nodes) {
      for (let i = 0; i < limit; i++) if ((await node.hit('sign-in:email:x', limit, T0)).allowed) allowed++
      // A peek agrees with the refusal: a node with no share answers 429 on the first attempt.
      const peek = await node.peek('sign-in:email:x', limit, T0)
      expect(peek.allowed).toBe(false)
    }
    expect(allowed).toBeLessThanOrEqual(limit)
    // Still usable where the share allows it: the floor, never a rounding up.
    expect(allowed).toBe(count * Math.floor(limit / count))
  })
})
