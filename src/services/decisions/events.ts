import type { TenantContext } from '../../context.js'
import { badRequest, notFound } from '../../errors.js'
import type { Check } from '../../scoring/types.js'
import type { EventFilter, EventRecord } from '../../store/events/events.js'
import { labelView } from '../network/labels.js'

/** A stored event as listings show it: hashes and coarse attributes only. */
export function eventView(e: EventRecord) {
  return {
    id: e.id,
    createdMs: e.createdMs,
    event: e.event,
    userId: e.userId,
    deviceId: e.deviceId,
    resolvedDeviceId: e.resolvedDeviceId,
    emailHash: e.emailHash,
    emailDomain: e.emailDomain,
    ipPrefix: e.ipPrefix,
    asn: e.asn,
    ipCountry: e.ipCountry,
    phoneHash: e.phoneHash,
    phoneCountry: e.phoneCountry,
    score: e.score,
    verdict: e.verdict,
    reasons: e.reasons,
    checks: JSON.parse(e.checks) as Check[],
  }
}

/** A page of events; `beforeId` (the `before` cursor) names an event of the tenant to list after. */
export async function listEvents(
  ctx: TenantContext,
  filter: Omit<EventFilter, 'before'> & { beforeId?: string },
) {
  const { beforeId, ...rest } = filter
  let before: EventFilter['before']
  if (beforeId !== undefined) {
    const e = await ctx.store.events.get(ctx.tenant.id, beforeId)
    if (!e) throw badRequest('query.before names no event of this tenant')
    before = { id: e.id, createdMs: e.createdMs }
  }
  const page = await ctx.store.events.list(ctx.tenant.id, before ? { ...rest, before } : rest)
  const labels = await ctx.store.labels.forEvents(ctx.tenant.id, page.events)
  return {
    events: page.events.map((e) => ({ ...eventView(e), labels: (labels.get(e.id) ?? []).map(labelView) })),
    total: page.total,
    limit: filter.limit,
    offset: filter.offset,
    totalCapped: page.totalCapped,
    searchedTo: page.searchedTo,
  }
}

/** One event as the listing shows it, with its labels and, when it has one, its device's profile. */
export async function getEvent(ctx: TenantContext, id: string) {
  const e = await ctx.store.events.get(ctx.tenant.id, id)
  if (!e) throw notFound(`event ${id} not found`)
  const labels = (await ctx.store.labels.forEvents(ctx.tenant.id, [e])).get(e.id) ?? []
  const device = e.resolvedDeviceId
    ? {
        resolvedId: e.resolvedDeviceId,
        profile: await ctx.store.consoleReads.deviceProfile(ctx.tenant.id, e.resolvedDeviceId, e.deviceId),
      }
    : null
  return { ...eventView(e), labels: labels.map(labelView), device }
}

/** Totals and average score per verdict and the top reason codes over a rolling window ending now. */
export async function eventStats(ctx: TenantContext, windowHours: number) {
  const to = ctx.clock.now()
  const from = to - windowHours * 3600_000
  const s = await ctx.store.events.stats(ctx.tenant.id, from, to)
  const of = (v: 'allow' | 'review' | 'block') => {
    const row = s.verdicts.find((x) => x.verdict === v)
    return { count: row?.count ?? 0, avgScore: row ? Math.round(row.avgScore * 100) / 100 : null }
  }
  const verdicts = { allow: of('allow'), review: of('review'), block: of('block') }
  const total = s.verdicts.reduce((n, v) => n + v.count, 0)
  const sum = s.verdicts.reduce((n, v) => n + v.count * v.avgScore, 0)
  return {
    windowHours,
    fromMs: from,
    toMs: to,
    total,
    avgScore: total ? Math.round((sum / total) * 100) / 100 : null,
    verdicts,
    topReasons: s.reasons,
  }
}
