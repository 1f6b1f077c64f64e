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

  hit(bucket: string, limit: number, nowMs: number): LimitResult {
    const start = nowMs - (nowMs % WINDOW_MS)
    if (start !== this.windowStart) {
      // A new window: forget the old counts wholesale, which also bounds memory.
      this.windowStart = start
      this.counts = new Map()
    }
    const used = (this.counts.get(bucket) ?? 0) + 1
    const allowed = used <= limit
    if (allowed) this.counts.set(bucket, used)
    const resetSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - nowMs) / 1000))
    return { allowed, limit, remaining: Math.max(0, limit - Math.min(used, limit)), resetSeconds }
  }
}
