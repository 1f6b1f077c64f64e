import { ApiError } from '../../errors.js'

/** Per-tenant bounds on heavy or multiplying work (VERDICT_* settings; docs/security.md). */
export interface TenantLimits {
  /** Simulations of one tenant running at once in this process. */
  simulationsPerTenant: number
  /** Events one tenant may simulate per minute in this process. */
  simulatedEventsPerMinute: number
  /** Active API keys (secret and publishable) one tenant may hold; each key has its own rate limit. */
  keysPerTenant: number
  consoleUsersPerTenant: number
}

const MINUTE_MS = 60_000

/**
 * Admission of one tenant's heavy work: at most `limits.simulationsPerTenant` at once, and a budget of
 * simulated events per fixed minute. Both are per process (a node's event loop is what they protect).
 */
export class TenantWork {
  private readonly running = new Map<string, number>()
  private readonly spent = new Map<string, { minute: number; units: number }>()

  constructor(readonly limits: TenantLimits) {}

  /**
   * Runs `work` when the tenant has no more than `simulationsPerTenant` of this kind running (429
   * otherwise): for reads whose cost grows with the tenant's stored data.
   */
  async exclusive<T>(kind: string, tenantId: string, work: () => Promise<T>): Promise<T> {
    const slot = `${kind}\u0000${tenantId}`
    const inFlight = this.running.get(slot) ?? 0
    if (inFlight >= this.limits.simulationsPerTenant) {
      throw new ApiError(
        'rate_limited',
        `at most ${this.limits.simulationsPerTenant} ${kind} request(s) of a tenant run at once; retry when it has finished`,
        { 'Retry-After': '5' },
      )
    }
    this.running.set(slot, inFlight + 1)
    try {
      return await work()
    } finally {
      const left = (this.running.get(slot) ?? 1) - 1
      if (left > 0) this.running.set(slot, left)
      else this.running.delete(slot)
    }
  }

  /** A simulation: `exclusive`, and `units` of the tenant's per-minute budget of simulated events. */
  async simulation<T>(tenantId: string, units: number, nowMs: number, work: () => Promise<T>): Promise<T> {
    const minute = Math.floor(nowMs / MINUTE_MS)
    const had = this.spent.get(tenantId)
    const used = had && had.minute === minute ? had.units : 0
    if (used + units > this.limits.simulatedEventsPerMinute) {
      const retry = Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - nowMs) / 1000))
      throw new ApiError(
        'rate_limited',
        `a tenant may simulate ${this.limits.simulatedEventsPerMinute} simulated events per minute (${used} used, ${units} asked); lower limit or retry later`,
        { 'Retry-After': String(retry) },
      )
    }
    return this.exclusive('simulation', tenantId, async () => {
      this.spent.set(tenantId, { minute, units: used + units })
      return work()
    })
  }
}
