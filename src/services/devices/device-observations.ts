import type { TenantContext } from '../../context.js'

/** At most this many observations per answer. */
export const OBSERVATIONS_LIMIT = 1000

/** The device's observation timeline for this tenant; an unknown device gives an empty list. */
export async function deviceObservations(ctx: TenantContext, deviceId: string, hours: number | null) {
  const since = hours === null ? null : ctx.clock.now() - hours * 3600_000
  const observations = await ctx.store.devices.list(ctx.tenant.id, deviceId, since, OBSERVATIONS_LIMIT)
  return { deviceId, hours, observations }
}
