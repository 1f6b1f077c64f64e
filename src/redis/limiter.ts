import { NO_SIGNALS, type Signals } from '../observability/signals.js'
import {
  gcra,
  LIMIT_WINDOW_MS,
  type Limiter,
  type LimitResult,
  RateLimiter,
} from '../services/runtime/rate-limiter.js'
import type { SharedRedis } from './connection.js'

// GCRA in one round trip, atomically on the Redis server (the same arithmetic as `gcra()` in
// services/runtime/rate-limiter.ts, `startTat()` included: a TAT up to another window ahead of this
// node's clock is a spent bucket, not a fresh one). Returns {allowed, remaining, reset seconds,
// retry-after seconds}.
const GCRA_LUA = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat - now > 2 * window then tat = now
elseif tat - now > window then tat = now + window end
if tat < now then tat = now end
local nxt = tat + interval
local allow_at = nxt - window
if now < allow_at then
  return {0, 0, math.ceil((tat - now) / 1000), math.max(1, math.ceil((allow_at - now) / 1000))}
end
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(nxt - now) + 1000)
local remaining = math.floor((window - (nxt - now)) / interval + 1e-9)
if remaining < 0 then remaining = 0 end
return {1, remaining, math.ceil((nxt - now) / 1000), 0}
`

// One request given back: the TAT moves back by one interval (deleted once it is not ahead of now).
const REFUND_LUA = `
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat then return 0 end
local back = tat - tonumber(ARGV[3]) / tonumber(ARGV[2])
local now = tonumber(ARGV[1])
if back <= now then redis.call('DEL', KEYS[1]) return 1 end
redis.call('SET', KEYS[1], string.format('%.3f', back), 'PX', math.ceil(back - now) + 1000)
return 1
`

/** The answer of a node whose share of a limit is 0 while Redis is away: retry once it is back. */
const noShare = (): LimitResult => ({
  allowed: false,
  limit: 0,
  remaining: 0,
  resetSeconds: LIMIT_WINDOW_MS / 1000,
  retryAfterSeconds: LIMIT_WINDOW_MS / 1000,
})

type GcraReply = [number, number, number, number]
interface WithGcra {
  verdictGcra(key: string, now: number, limit: number, windowMs: number): Promise<GcraReply>
  verdictRefund(key: string, now: number, limit: number, windowMs: number): Promise<number>
}

/**
 * Limits shared by every node through Redis. While Redis cannot answer, each node enforces its share
 * of the limit in memory (the limit divided by `nodes`, rounded down), so the nodes together never
 * allow more than the budget without a dependency on Redis; a node whose share is 0 refuses.
 */
export class RedisLimiter implements Limiter {
  private readonly local = new RateLimiter()

  constructor(
    private readonly redis: SharedRedis,
    private readonly nodes: number,
    private readonly signals: Signals = NO_SIGNALS,
  ) {
    redis.client.defineCommand('verdictGcra', { numberOfKeys: 1, lua: GCRA_LUA })
    redis.client.defineCommand('verdictRefund', { numberOfKeys: 1, lua: REFUND_LUA })
  }

  async hit(bucket: string, limit: number, nowMs: number): Promise<LimitResult> {
    if (this.redis.ready) {
      try {
        const client = this.redis.client as unknown as WithGcra
        const [allowed, remaining, resetSeconds, retryAfterSeconds] = await client.verdictGcra(
          this.redis.key('rl', bucket),
          nowMs,
          limit,
          LIMIT_WINDOW_MS,
        )
        return { allowed: allowed === 1, limit, remaining, resetSeconds, retryAfterSeconds }
      } catch {
        // Timed out or disconnected mid-call: this request is limited locally, like the next ones.
      }
    }
    this.signals.limiterFallback()
    const share = this.share(limit)
    return share === 0 ? noShare() : this.local.hit(bucket, share, nowMs)
  }

  /** A plain GET: a peek changes nothing, so it needs no script to be atomic. */
  async peek(bucket: string, limit: number, nowMs: number): Promise<LimitResult> {
    if (this.redis.ready) {
      try {
        const stored = await this.redis.client.get(this.redis.key('rl', bucket))
        return gcra(stored === null ? undefined : Number(stored), limit, nowMs).result
      } catch {
        // As in hit(): this node's share decides while Redis does not answer.
      }
    }
    const share = this.share(limit)
    return share === 0 ? noShare() : this.local.peek(bucket, share, nowMs)
  }

  async refund(bucket: string, limit: number, nowMs: number): Promise<void> {
    if (this.redis.ready) {
      try {
        const client = this.redis.client as unknown as WithGcra
        await client.verdictRefund(this.redis.key('rl', bucket), nowMs, limit, LIMIT_WINDOW_MS)
        return
      } catch {
        // As in hit(): the local share was counted, so it is the one given back.
      }
    }
    const share = this.share(limit)
    if (share > 0) this.local.refund(bucket, share, nowMs)
  }

  /** This node's part of a limit while Redis is away. */
  private share(limit: number): number {
    // Rounded up to 1, six nodes would allow six sign-in guesses of a five-per-email limit.
    return Math.floor(limit / this.nodes)
  }
}
