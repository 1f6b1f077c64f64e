import type { TenantContext } from '../../context.js'
import { ApiError, notFound } from '../../errors.js'
import { templateExplanation } from '../../scoring/explain.js'
import { DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS } from '../../scoring/tenant-config.js'
import type { Check, Verdict } from '../../scoring/types.js'
import { usagePeriod } from '../../store/access/usage.js'
import { issueKey, revokeKey, rotateKey, TenantAdminError } from '../access/tenants.js'
import { eventStats, eventView } from '../decisions/events.js'
import { ConsoleUserError, createConsoleUser } from './console-auth.js'

/**
 * What the console reads and changes beyond the /v1 routes it calls directly: one event in full, the
 * hourly overview, the tenant's keys and console users. Every verb is scoped by the context's tenant,
 * and another tenant's id answers 404 exactly like an unknown one.
 */

/** Device timeline entries shown on an event's page. */
const TIMELINE = 20

export async function eventDetail(ctx: TenantContext, id: string) {
  const e = await ctx.store.events.get(ctx.tenant.id, id)
  if (!e) throw notFound(`event ${id} not found`)
  const view = eventView(e)
  const labels = await ctx.store.consoleReads.eventLabels(ctx.tenant.id, id)
  let device = null
  if (e.resolvedDeviceId) {
    const obs = await ctx.store.devices.list(ctx.tenant.id, e.resolvedDeviceId, null, TIMELINE)
    const profile = await ctx.store.consoleReads.deviceProfile(ctx.tenant.id, e.resolvedDeviceId, e.deviceId)
    device = { resolvedId: e.resolvedDeviceId, profile, timeline: obs }
  }
  const explanation = templateExplanation({
    score: e.score,
    verdict: e.verdict as Verdict,
    checks: view.checks as Check[],
  })
  return { event: view, explanation, labels, device }
}

export async function reviewQueue(ctx: TenantContext, limit: number) {
  const { events, total } = await ctx.store.consoleReads.reviewQueue(ctx.tenant.id, limit)
  return { events: events.map(eventView), total }
}

/** The built-in weights and thresholds, beside which the Rules page shows the tenant's own. */
export const scoringDefaults = () => ({
  weights: { ...DEFAULT_WEIGHTS },
  thresholds: { ...DEFAULT_THRESHOLDS },
})

const HOUR = 3600_000

export async function overview(ctx: TenantContext, hours: number) {
  const now = ctx.clock.now()
  const until = Math.floor(now / HOUR) * HOUR + HOUR
  const since = until - hours * HOUR
  const rows = await ctx.store.consoleReads.hourly(ctx.tenant.id, since, until)
  const byHour = new Map<number, { hourMs: number; allow: number; review: number; block: number }>()
  for (let h = since; h < until; h += HOUR) byHour.set(h, { hourMs: h, allow: 0, review: 0, block: 0 })
  for (const r of rows) {
    const slot = byHour.get(r.hourMs)
    if (slot && (r.verdict === 'allow' || r.verdict === 'review' || r.verdict === 'block'))
      slot[r.verdict] += r.count
  }
  const period = usagePeriod(now)
  return {
    stats: await eventStats(ctx, hours),
    hourly: [...byHour.values()],
    quota: {
      period,
      used: await ctx.store.usage.used(ctx.tenant.id, period),
      limit: ctx.tenant.monthlyQuota,
    },
  }
}

export async function tenantKeys(ctx: TenantContext) {
  const keys = await ctx.store.tenants.listKeys(ctx.tenant.id)
  return {
    keys: keys.map((k) => ({
      keyId: k.id,
      prefix: k.prefix,
      kind: k.kind ?? 'secret',
      origins: k.origins ?? [],
      createdMs: k.createdMs,
      revokedMs: k.revokedMs,
      lastUsedMs: k.lastUsedMs ?? null,
      replacedBy: k.replacedBy ?? null,
    })),
  }
}

const adminError = (err: unknown): never => {
  if (err instanceof TenantAdminError) throw new ApiError('bad_request', err.message)
  throw err
}

export async function createTenantKey(
  ctx: TenantContext,
  body: { publishable?: boolean; origins?: string[] },
) {
  const origins = body.origins ?? []
  if (!body.publishable && origins.length > 0)
    throw new ApiError('bad_request', 'origins need publishable: true')
  // Each key has its own rate limit: a cap keeps minting keys from multiplying the tenant's.
  const max = ctx.tenantWork.limits.keysPerTenant
  const active = (await ctx.store.tenants.listKeys(ctx.tenant.id)).filter((k) => k.revokedMs === null)
  if (active.length >= max)
    throw new ApiError('conflict', `a tenant holds at most ${max} active keys: revoke one first`)
  const issued = await issueKey(
    ctx.store,
    ctx.clock,
    ctx.tenant.id,
    body.publishable ? { publishable: { origins } } : {},
  ).catch(adminError)
  return { keyId: issued.keyId, apiKey: issued.apiKey }
}

/** The tenant's own active key, else 404 (another tenant's key is as unknown as a missing one). */
async function ownKey(ctx: TenantContext, keyId: string) {
  const key = await ctx.store.tenants.getKey(keyId)
  if (!key || key.tenantId !== ctx.tenant.id) throw notFound(`key ${keyId} not found`)
  if (key.revokedMs !== null) throw new ApiError('conflict', `key ${keyId} is already revoked`)
  return key
}

export async function rotateTenantKey(ctx: TenantContext, keyId: string) {
  await ownKey(ctx, keyId)
  const issued = await rotateKey(ctx.store, ctx.clock, keyId).catch(adminError)
  return { keyId: issued.keyId, apiKey: issued.apiKey }
}

export async function revokeTenantKey(ctx: TenantContext, keyId: string) {
  await ownKey(ctx, keyId)
  await revokeKey(ctx.store, ctx.clock, keyId).catch(adminError)
  return { keyId, revoked: true }
}

export async function tenantUsers(ctx: TenantContext) {
  const users = await ctx.store.console.listUsers(ctx.tenant.id)
  return { users: users.map((u) => ({ userId: u.id, email: u.email, createdMs: u.createdMs })) }
}

export async function addTenantUser(ctx: TenantContext, body: { email: string; password: string }) {
  const max = ctx.tenantWork.limits.consoleUsersPerTenant
  if ((await ctx.store.console.listUsers(ctx.tenant.id)).length >= max)
    throw new ApiError('conflict', `a tenant has at most ${max} console users: remove one first`)
  try {
    return await createConsoleUser(
      ctx.store,
      ctx.clock,
      { tenantId: ctx.tenant.id, ...body },
      ctx.passwordCost,
    )
  } catch (err) {
    // Emails are unique across the deployment (sign-in takes an email alone): the answer to a taken one
    // is the same whichever tenant holds it, and names neither the email nor the tenant.
    if (err instanceof ConsoleUserError && err.code === 'conflict')
      throw new ApiError('conflict', 'this email cannot be used for a new console user')
    if (err instanceof ConsoleUserError) throw new ApiError(err.code, err.message)
    throw err
  }
}
