import type { TenantContext } from '../context.js'
import type { Work } from '../store/index.js'
import { usagePeriod } from '../store/usage.js'
import { quotaExceeded } from './quota-check.js'

/**
 * Counts `units` metered units (scored events or identifier checks) against the tenant's monthly
 * quota, atomically, as part of the unit of work that records the request: a refused or failed request
 * leaves neither usage nor records behind.
 */
export function* consumeQuota(ctx: TenantContext, units: number, nowMs: number): Work<void> {
  const quota = ctx.tenant.monthlyQuota
  if (yield* ctx.store.usage.meter(ctx.tenant.id, usagePeriod(nowMs), units, quota)) return
  throw quotaExceeded(quota, units, nowMs)
}
