import { ApiError } from '../errors.js'
import type { Sql } from '../store/index.js'
import { usagePeriod } from '../store/usage.js'
import type { TenantCtx } from './context.js'

function nextPeriodStart(nowMs: number): number {
  const d = new Date(nowMs)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/**
 * Counts `units` metered units (scored events or identifier checks) against the tenant's monthly
 * quota, atomically. Pass the transaction that records the request so a refused or failed request
 * leaves neither usage nor records behind.
 */
export async function consumeQuota(ctx: TenantCtx, units: number, sql?: Sql): Promise<void> {
  const now = ctx.clock.now()
  const quota = ctx.tenant.monthlyQuota
  if (await ctx.store.usage.meter(ctx.tenant.id, usagePeriod(now), units, quota, sql)) return
  const reset = nextPeriodStart(now)
  throw new ApiError(
    'quota_exceeded',
    `monthly quota of ${quota} metered units exhausted (this request needs ${units}); it resets at ${new Date(reset).toISOString()}`,
    { 'Retry-After': String(Math.ceil((reset - now) / 1000)) },
  )
}
