import type { TenantContext } from '../../context.js'
import { usagePeriod } from '../../store/access/usage.js'
import { nextPeriodStart } from './quota-check.js'

/** This month's metered units against the tenant's quota (GET /v1/usage and the Quota-* headers). */
export async function usageReport(ctx: TenantContext) {
  const now = ctx.clock.now()
  const period = usagePeriod(now)
  const used = await ctx.store.usage.used(ctx.tenant.id, period)
  const quota = ctx.tenant.monthlyQuota
  return { period, used, quota, remaining: Math.max(0, quota - used), resets_ms: nextPeriodStart(now) }
}
