import { badRequest, notFound } from '../errors.js'
import { parseIp } from '../intel/ip/normalize.js'
import type { NetworkEntity } from '../store/network.js'
import type { TenantCtx } from './context.js'
import { emailKey, type IdentifierDeps } from './identifiers.js'
import { networkEntities, suppressionHash } from './network.js'

export interface LabelBody {
  label: 'fraud' | 'chargeback' | 'legit'
  event_id?: string
  entities?: { ip?: string; email?: string; device_id?: string }
  note?: string
}

type Ctx = TenantCtx & IdentifierDeps

/**
 * Records an outcome. `fraud`/`chargeback` on an event this tenant scored feed the operator network
 * (only when the tenant opted in); `legit` writes a suppression for each entity and withdraws this
 * tenant's own network flags for them. Entities sent without an event are recorded locally only: the
 * network accepts flags only for traffic the tenant actually scored. The event's verdict never changes.
 */
export async function label(ctx: Ctx, body: LabelBody) {
  const now = ctx.clock.now()
  let stored = {
    ipHash: null as string | null,
    emailHash: null as string | null,
    deviceId: null as string | null,
    userId: null as string | null,
  }
  if (body.event_id !== undefined) {
    const ev = await ctx.store.events.get(ctx.tenant.id, body.event_id)
    if (!ev) throw notFound(`event ${body.event_id} not found`)
    stored = { ipHash: ev.ipHash, emailHash: ev.emailHash, deviceId: ev.deviceId, userId: ev.userId }
  }
  const given = body.entities ?? {}
  if (given.ip !== undefined) {
    const ip = parseIp(given.ip)
    if (!ip) throw badRequest('body.entities.ip is not a valid IP address')
    stored.ipHash ??= ctx.hasher.entity('ip', ip.ip)
  }
  if (given.email !== undefined) {
    const a = ctx.intel.email.analyze(given.email)
    if (a.malformed) throw badRequest('body.entities.email is not a valid email address')
    stored.emailHash ??= ctx.hasher.entity('email', emailKey(a, given.email).key)
  }
  if (given.device_id !== undefined) stored.deviceId ??= given.device_id
  if (body.event_id === undefined && !given.ip && !given.email && !given.device_id) {
    throw badRequest('send event_id, entities or both')
  }
  const entities = networkEntities(ctx.hasher, stored)
  const hashes = entities.map((e) => suppressionHash(ctx.hasher, e))
  const alreadySuppressed = await ctx.store.privacy.suppressed(ctx.tenant.id, hashes)

  let contributed: NetworkEntity[] = []
  let withdrawn = 0
  const labelId = await ctx.store.db.tx(async (sql) => {
    const id = await ctx.store.privacy.addLabel(sql, ctx.tenant.id, {
      eventId: body.event_id ?? null,
      label: body.label,
      note: body.note ?? null,
      ...stored,
      createdMs: now,
    })
    if (body.label === 'legit') {
      await ctx.store.privacy.addSuppressions(
        sql,
        ctx.tenant.id,
        entities.map((e, i) => ({
          action: 'legit' as const,
          entityType: e.kind,
          valueHash: hashes[i]!,
          eventId: body.event_id ?? null,
          createdMs: now,
        })),
      )
      withdrawn = await ctx.store.network.withdrawFlags(sql, ctx.tenant.id, entities)
    } else if (body.event_id !== undefined && ctx.tenant.shareNetwork) {
      contributed = entities.filter((_, i) => !alreadySuppressed.has(hashes[i]!))
      await ctx.store.network.addFlags(sql, ctx.tenant.id, contributed, body.label, body.event_id, now)
    }
    return id
  })
  return {
    label_id: String(labelId),
    label: body.label,
    event_id: body.event_id ?? null,
    network: {
      shared: ctx.tenant.shareNetwork,
      contributed: contributed.map((e) => e.kind),
      withdrawn_flags: withdrawn,
    },
    suppressed: body.label === 'legit' ? entities.map((e) => e.kind) : [],
  }
}
