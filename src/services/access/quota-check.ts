import type { TenantContext } from '../../context.js'
import { ApiError } from '../../errors.js'
import { usagePeriod } from '../../store/access/usage.js'

/** Start of the next calendar month (UTC), when the monthly meter starts again. */
export function nextPeriodStart(nowMs: number): number {
  const d = new Date(nowMs)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/** The 429 a request gets when `units` do not fit in the monthly quota. */
export function quotaExceeded(quota: number, units: number, nowMs: number): ApiError {
  const reset = nextPeriodStart(nowMs)
  return new ApiError(
    'quota_exceeded',
    `monthly quota of ${quota} metered units exhausted (this request needs ${units}); it resets at ${new Date(reset).toISOString()}`,
    { 'Retry-After': String(Math.ceil((reset - nowMs) / 1000)) },
  )
}

/**
 * Refuses, before any work is done (DNS lookups, SMTP probes), a request whose units cannot fit in
 * what is left of the tenant's monthly quota, so an over-quota key costs nothing. Read-only: the
 * units are still metered atomically with the recording (consumeQuota), which also refuses the rare
 * request that a concurrent one overtook in between.
 */
export async function assertQuotaFits(ctx: TenantContext, units: number): Promise<void> {
  const now = ctx.clock.now()
  const quota = ctx.tenant.monthlyQuota
  if (await ctx.store.usage.mayFit(ctx.tenant.id, usagePeriod(now), units, quota)) return
  throw quotaExceeded(quota, units, now)
}
