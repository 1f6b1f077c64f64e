import { block64, parseIp } from '../../intel/ip/normalize.js'

export interface LimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the whole budget is available again (`RateLimit-Reset`). */
  resetSeconds: number
  /** Refused only: seconds until one more request is allowed (`Retry-After`). */
  retryAfterSeconds: number
}

/** Every limit is a budget per minute. */
export const LIMIT_WINDOW_MS = 60_000

/**
 * The limiter the request guard asks: the in-process one below, or the Redis one shared by every node
 * (src/limits/). `shared` says which answered, for health.
 */
export interface Limiter {
  hit(bucket: string, limit: number, nowMs: number): LimitResult | Promise<LimitResult>
  /** Whether one more hit would be allowed, counting nothing (throttles that count failures only). */
  peek(bucket: string, limit: number, nowMs: number): LimitResult | Promise<LimitResult>
  /** Gives one counted request back (a sign-in attempt counted before its check, which succeeded). */
  refund(bucket: string, limit: number, nowMs: number): void | Promise<void>
}

/**
 * The stored TAT as seen from `nowMs`. A spent bucket is a window ahead of the clock that spent it, so
 * a TAT further ahead means this clock reads earlier: by less than another window, a node whose clock
 * lags the others on Redis or a request timed before one already counted; the bucket counts as spent,
 * never afresh (that let an 11th request of 10 in).
 * Further ahead still, the clock stepped back (a test clock, an NTP step): start afresh rather than
 * refuse for as long as it jumped. Mirrored in the Lua script of src/redis/limiter.ts.
 */
function startTat(storedTat: number | undefined, nowMs: number): number {
  if (storedTat === undefined || storedTat - nowMs > 2 * LIMIT_WINDOW_MS) return nowMs
  return Math.min(storedTat, nowMs + LIMIT_WINDOW_MS)
}

/**
 * GCRA (the generic cell rate algorithm): a budget of `limit` per minute refills continuously, one
 * request every minute/limit, and a full budget can be spent at once. Unlike fixed windows, no window
 * edge lets a caller spend two budgets back to back. The state is one number per bucket: the
 * theoretical arrival time (TAT) of the next request once the budget is spent.
 */
export function gcra(
  storedTat: number | undefined,
  limit: number,
  nowMs: number,
): { result: LimitResult; tat: number | null } {
  const interval = LIMIT_WINDOW_MS / limit
  const tat = Math.max(startTat(storedTat, nowMs), nowMs)
  const next = tat + interval
  const allowAt = next - LIMIT_WINDOW_MS
  if (nowMs < allowAt) {
    const result = {
      allowed: false,
      limit,
      remaining: 0,
      resetSeconds: Math.ceil((tat - nowMs) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((allowAt - nowMs) / 1000)),
    }
    return { result, tat: null }
  }
  // The epsilon absorbs float error of minute/limit (e.g. limit 7) so a full budget reads exactly.
  const remaining = Math.max(0, Math.floor((LIMIT_WINDOW_MS - (next - nowMs)) / interval + 1e-9))
  const result = {
    allowed: true,
    limit,
    remaining,
    resetSeconds: Math.ceil((next - nowMs) / 1000),
    retryAfterSeconds: 0,
  }
  return { result, tat: next }
}

/** Buckets kept before a sweep drops those whose budget has fully refilled (bounds memory). */
const SWEEP_ABOVE = 10_000

/** GCRA per bucket in this process's memory. */
export class RateLimiter implements Limiter {
  private tats = new Map<string, number>()
  private lastSweep = 0

  /** Counts one request against the bucket; a refused request is not counted. */
  hit(bucket: string, limit: number, nowMs: number): LimitResult {
    const { result, tat } = gcra(this.tats.get(bucket), limit, nowMs)
    if (tat !== null) {
      this.tats.set(bucket, tat)
      if (this.tats.size > SWEEP_ABOVE && nowMs - this.lastSweep >= 1000) this.sweep(nowMs)
    }
    return result
  }

  /** Whether one more hit would still be allowed, without counting anything. */
  peek(bucket: string, limit: number, nowMs: number): LimitResult {
    return gcra(this.tats.get(bucket), limit, nowMs).result
  }

  refund(bucket: string, limit: number, nowMs: number): void {
    const tat = this.tats.get(bucket)
    if (tat === undefined) return
    const back = tat - LIMIT_WINDOW_MS / limit
    if (back <= nowMs) this.tats.delete(bucket)
    else this.tats.set(bucket, back)
  }

  private sweep(nowMs: number): void {
    this.lastSweep = nowMs
    for (const [bucket, tat] of this.tats) if (tat <= nowMs) this.tats.delete(bucket)
  }
}

/**
 * The bucket a client address is limited under: an IPv4 address itself, an IPv6 address by its /64
 * (one subscriber's allocation, so a caller cannot escape a per-IP limit by walking its own /64).
 */
export function clientBucket(ip: string): string {
  const p = parseIp(ip)
  if (!p) return ip
  return block64(p) ?? p.ip
}
