import { formatIp, parseIp } from '../intel/ip/normalize.js'

/** Fixed one-minute windows per bucket, read from the injectable clock. In-memory: per process. */
export interface LimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  resetSeconds: number
}

const WINDOW_MS = 60_000

export class RateLimiter {
  private windowStart = 0
  private counts = new Map<string, number>()

  private roll(nowMs: number): number {
    const start = nowMs - (nowMs % WINDOW_MS)
    if (start !== this.windowStart) {
      // A new window: forget the old counts wholesale, which also bounds memory.
      this.windowStart = start
      this.counts = new Map()
    }
    return Math.max(1, Math.ceil((start + WINDOW_MS - nowMs) / 1000))
  }

  /** Counts one request against the bucket; a refused request is not counted. */
  hit(bucket: string, limit: number, nowMs: number): LimitResult {
    const resetSeconds = this.roll(nowMs)
    const used = (this.counts.get(bucket) ?? 0) + 1
    const allowed = used <= limit
    if (allowed) this.counts.set(bucket, used)
    return { allowed, limit, remaining: Math.max(0, limit - Math.min(used, limit)), resetSeconds }
  }

  /** Whether one more hit would still be allowed, without counting anything. */
  peek(bucket: string, limit: number, nowMs: number): LimitResult {
    const resetSeconds = this.roll(nowMs)
    const used = this.counts.get(bucket) ?? 0
    return { allowed: used < limit, limit, remaining: Math.max(0, limit - used), resetSeconds }
  }
}

/**
 * The bucket a client address is limited under: an IPv4 address itself, an IPv6 address by its /64
 * (one subscriber's allocation, so a caller cannot escape a per-IP limit by walking its own /64).
 */
export function clientBucket(ip: string): string {
  const p = parseIp(ip)
  if (!p) return ip
  if (p.version === 4) return p.ip
  return `${formatIp((p.value >> 64n) << 64n, 6)}/64`
}
