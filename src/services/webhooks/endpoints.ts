import { randomBytes } from 'node:crypto'
import type { TenantContext } from '../../context.js'
import { ApiError, badRequest, notFound } from '../../errors.js'
import type { WebhookEndpoint } from '../../store/webhooks/endpoints.js'
import type { DeliveryStatus, DeliveryView } from '../../store/webhooks/outbox.js'
import { newSecret } from './signing.js'
import { checkTarget, RefusedTarget } from './target.js'

/** Endpoints one tenant may have. */
export const MAX_ENDPOINTS = 20

/** Longest overlap of a rotated secret with its successor. */
export const MAX_OVERLAP_SECONDS = 7 * 86400
export const DEFAULT_OVERLAP_SECONDS = 86400

export interface EndpointInput {
  url: string
  events: string[]
  description?: string
}

export interface EndpointPatch {
  url?: string
  events?: string[]
  description?: string
  enabled?: boolean
}

/** An endpoint as the API shows it; the secret only at creation and rotation. */
export function endpointView(e: WebhookEndpoint, nowMs: number) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    failing_since_ms: e.failingSinceMs,
    previous_secret_until_ms:
      e.previousUntilMs !== null && e.previousUntilMs > nowMs ? e.previousUntilMs : null,
    created_ms: e.createdMs,
    updated_ms: e.updatedMs,
  }
}

async function target(ctx: TenantContext, url: string): Promise<string> {
  try {
    return (await checkTarget(url, ctx.webhooks.policy, ctx.webhooks.resolve)).toString()
  } catch (err) {
    if (err instanceof RefusedTarget) throw badRequest(`body.${err.message}`)
    throw err
  }
}

async function own(ctx: TenantContext, id: string): Promise<WebhookEndpoint> {
  const e = await ctx.store.webhookEndpoints.get(ctx.tenant.id, id)
  if (!e) throw notFound(`webhook ${id} not found`)
  return e
}

const unique = (events: string[]) => [...new Set(events)]

export async function createEndpoint(ctx: TenantContext, input: EndpointInput) {
  const url = await target(ctx, input.url)
  const existing = await ctx.store.webhookEndpoints.list(ctx.tenant.id)
  if (existing.length >= MAX_ENDPOINTS)
    throw new ApiError('conflict', `a tenant can have at most ${MAX_ENDPOINTS} webhook endpoints`)
  const now = ctx.clock.now()
  const endpoint: WebhookEndpoint = {
    id: `ep_${randomBytes(12).toString('hex')}`,
    tenantId: ctx.tenant.id,
    url,
    description: input.description ?? '',
    events: unique(input.events),
    enabled: true,
    disabledReason: null,
    secret: newSecret(),
    previousSecret: null,
    previousUntilMs: null,
    failingSinceMs: null,
    createdMs: now,
    updatedMs: now,
  }
  await ctx.store.webhookEndpoints.create(endpoint)
  return { ...endpointView(endpoint, now), secret: endpoint.secret }
}

export async function listEndpoints(ctx: TenantContext) {
  const now = ctx.clock.now()
  return { webhooks: (await ctx.store.webhookEndpoints.list(ctx.tenant.id)).map((e) => endpointView(e, now)) }
}

export async function getEndpoint(ctx: TenantContext, id: string) {
  return endpointView(await own(ctx, id), ctx.clock.now())
}

export async function updateEndpoint(ctx: TenantContext, id: string, patch: EndpointPatch) {
  await own(ctx, id)
  const url = patch.url === undefined ? undefined : await target(ctx, patch.url)
  await ctx.store.webhookEndpoints.update(
    ctx.tenant.id,
    id,
    {
      ...(url === undefined ? {} : { url }),
      ...(patch.events === undefined ? {} : { events: unique(patch.events) }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
    },
    ctx.clock.now(),
  )
  if (patch.enabled) ctx.webhooks.nudge()
  return getEndpoint(ctx, id)
}

export async function deleteEndpoint(ctx: TenantContext, id: string) {
  if (!(await ctx.store.webhookEndpoints.remove(ctx.tenant.id, id))) throw notFound(`webhook ${id} not found`)
  return { id, deleted: true }
}

/** A new secret; the old one keeps signing beside it for `overlapSeconds`, so receivers can switch. */
export async function rotateSecret(ctx: TenantContext, id: string, overlapSeconds = DEFAULT_OVERLAP_SECONDS) {
  await own(ctx, id)
  const now = ctx.clock.now()
  const secret = newSecret()
  await ctx.store.webhookEndpoints.rotate(ctx.tenant.id, id, secret, now + overlapSeconds * 1000, now)
  return { ...(await getEndpoint(ctx, id)), secret }
}

const deliveryView = (d: DeliveryView) => ({
  message_id: d.messageId,
  event_type: d.type,
  status: d.status,
  attempts: d.attempts,
  next_attempt_ms: d.nextMs,
  last_status_code: d.lastStatus,
  last_error: d.lastError,
  last_attempt_ms: d.lastAttemptMs,
  delivered_ms: d.deliveredMs,
  created_ms: d.createdMs,
  payload: JSON.parse(d.payload) as Record<string, unknown>,
})

export async function listDeliveries(
  ctx: TenantContext,
  id: string,
  page: { limit: number; offset: number; status?: DeliveryStatus },
) {
  await own(ctx, id)
  const { deliveries, total } = await ctx.store.webhookOutbox.deliveries(
    ctx.tenant.id,
    id,
    page.limit,
    page.offset,
    page.status,
  )
  return { deliveries: deliveries.map(deliveryView), total, limit: page.limit, offset: page.offset }
}

/** Sends a delivery again, with the same `webhook-id`, from the start of the retry schedule. */
export async function redeliver(ctx: TenantContext, id: string, messageId: string) {
  const endpoint = await own(ctx, id)
  if (!endpoint.enabled) throw new ApiError('conflict', `webhook ${id} is disabled: enable it first`)
  const done = await ctx.store.webhookOutbox.redeliver(ctx.tenant.id, id, messageId, ctx.clock.now())
  if (done === false) throw notFound(`delivery ${messageId} not found`)
  if (done === null) throw new ApiError('conflict', `delivery ${messageId} is being sent right now`)
  ctx.webhooks.nudge()
  return { message_id: messageId, status: 'pending' as const }
}
