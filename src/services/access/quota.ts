import type { TenantContext } from '../../context.js'
import { tenantGone } from '../../errors.js'
import { TenantGone } from '../../store/access/tenant-hold.js'
import { usagePeriod } from '../../store/access/usage.js'
import type { GroupMeter } from '../../store/events/group-meter.js'
import type { Work } from '../../store/index.js'
import { quotaExceeded } from './quota-check.js'

/**
 * Counts `units` metered units (scored events or identifier checks) against the tenant's monthly
 * quota, atomically, as part of the unit of work that records the request: a refused or failed request
 * leaves neither usage nor records behind. Inside a group commit, `meter` is the group's meter, which
 * decides now and writes the units at the end of the group (store/events/group-meter.ts); without one the
 * units are written at once, and the tenant's usage row stays locked until the transaction ends.
 */
export function* consumeQuota(
  ctx: TenantContext,
  units: number,
  nowMs: number,
  meter?: GroupMeter,
): Work<void> {
  const quota = ctx.tenant.monthlyQuota
  const period = usagePeriod(nowMs)
  let fits: boolean
  try {
    fits = meter
      ? yield* meter.take(ctx.tenant.id, period, units, quota)
      : yield* ctx.store.usage.meter(ctx.tenant.id, period, units, quota)
  } catch (err) {
    if (err instanceof TenantGone) throw tenantGone()
    throw err
  }
  if (fits) return
  throw quotaExceeded(quota, units, nowMs)
}
