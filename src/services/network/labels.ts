import type { TenantContext } from '../../context.js'
import { badRequest, notFound, tenantGone } from '../../errors.js'
import { parseIp } from '../../intel/ip/normalize.js'
import { holdTenant } from '../../store/access/tenant-hold.js'
import { addAsnBad } from '../../store/events/aggregates.js'
import type { Work } from '../../store/index.js'
import type { LabelFilter } from '../../store/network/labels.js'
import type { NetworkEntity } from '../../store/network/network.js'
import type { LabelRecord } from '../../store/privacy/privacy.js'
import { emailKey } from '../identifiers/evaluate.js'
import { type Idem, NO_IDEM } from '../runtime/idempotency.js'
import { type Actor, emit } from '../webhooks/events.js'
import { networkEntities, suppressionHash } from './entities.js'

export interface LabelBody {
  label: 'fraud' | 'chargeback' | 'legit'
  event_id?: string
  user_id?: string
  entities?: { ip?: string; email?: string; device_id?: string }
  note?: string
}

interface Identifiers {
  ipHash: string | null
  emailHash: string | null
  deviceId: string | null
  userId: string | null
}

const NONE: Identifiers = { ipHash: null, emailHash: null, deviceId: null, userId: null }

/** What recording a label did: its row id, the entities it gave the network, those it suppressed. */
interface Recorded {
  id: number
  contributed: NetworkEntity[]
  suppressed: NetworkEntity[]
}

/** The identifiers named in the body's `entities`, hashed as events store them. */
function givenIdentifiers(ctx: TenantContext, given: NonNullable<LabelBody['entities']>): Identifiers {
  const out = { ...NONE }
  if (given.ip !== undefined) {
    const ip = parseIp(given.ip)
    if (!ip) throw badRequest('body.entities.ip is not a valid IP address')
    out.ipHash = ctx.hasher.entity('ip', ip.ip)
  }
  if (given.email !== undefined) {
    const a = ctx.intel.email.analyze(given.email)
    if (a.malformed) throw badRequest('body.entities.email is not a valid email address')
    out.emailHash = ctx.hasher.entity('email', emailKey(a, given.email).key)
  }
  if (given.device_id !== undefined) out.deviceId = given.device_id
  return out
}

function unique(entities: NetworkEntity[]): NetworkEntity[] {
  const seen = new Set<string>()
  return entities.filter((e) => {
    const k = `${e.kind}\u0000${e.valueHash}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/**
 * Records an outcome. Only identifiers recorded on the tenant's own scored event can reach the
 * operator network (`fraud`/`chargeback`, opted-in tenants only): whatever `entities` adds stays in
 * this tenant's label and, for `legit`, its suppressions, so no tenant can flag a person it never
 * scored. `legit` is a local suppression only: it removes no flag from the network, not even this
 * tenant's own, so nobody else's risk is lowered. The event's verdict never changes.
 */
export async function label(
  ctx: TenantContext,
  body: LabelBody,
  idem: Idem = NO_IDEM,
  actor: Actor | null = null,
) {
  const now = ctx.clock.now()
  let recorded = NONE
  let queuedForReview = false
  if (body.event_id !== undefined) {
    const ev = await ctx.store.events.get(ctx.tenant.id, body.event_id)
    if (!ev) throw notFound(`event ${body.event_id} not found`)
    queuedForReview = ev.verdict === 'review'
    recorded = { ipHash: ev.ipHash, emailHash: ev.emailHash, deviceId: ev.deviceId, userId: ev.userId }
  }
  const given = givenIdentifiers(ctx, body.entities ?? {})
  if (body.user_id !== undefined) given.userId = body.user_id
  if (
    body.event_id === undefined &&
    body.user_id === undefined &&
    !given.ipHash &&
    !given.emailHash &&
    given.deviceId === null
  ) {
    throw badRequest('send event_id, user_id, entities or a combination')
  }
  // The label row: the event's identifiers, and the body's where the event has none of that kind.
  const row: Identifiers = {
    ipHash: recorded.ipHash ?? given.ipHash,
    emailHash: recorded.emailHash ?? given.emailHash,
    deviceId: recorded.deviceId ?? given.deviceId,
    userId: recorded.userId ?? given.userId,
  }
  const shareable = networkEntities(ctx.hasher, recorded)
  const local = unique([...shareable, ...networkEntities(ctx.hasher, given)])

  // Entities this tenant suppressed earlier (legit, erasure) are never contributed again.
  const contributes = body.label !== 'legit' && body.event_id !== undefined && ctx.tenant.shareNetwork
  const hashes = shareable.map((e) => suppressionHash(ctx.hasher, e))
  const already = contributes ? await ctx.store.privacy.suppressed(ctx.tenant.id, hashes) : new Set<string>()

  const { store, tenant, hasher } = ctx
  const target = {
    eventId: body.event_id ?? null,
    userId: body.event_id === undefined ? (body.user_id ?? null) : null,
  }
  const answer = (r: Recorded) => ({
    label_id: String(r.id),
    label: body.label,
    event_id: body.event_id ?? null,
    user_id: row.userId,
    network: { shared: tenant.shareNetwork, contributed: r.contributed.map((e) => e.kind) },
    suppressed: [...new Set(r.suppressed.map((e) => e.kind))],
  })
  let queued = 0
  const out = await store.db.tx(function* () {
    // Before anything is written: the ASN counters have no tenant foreign key (schema/tenant-keys.ts).
    if (!(yield* holdTenant(store.db.dialect, tenant.id))) throw tenantGone()
    yield* idem.claim(now)
    // The same label on the same event (or user) again is the same label: nothing more is recorded.
    const same =
      target.eventId !== null || target.userId !== null
        ? yield* store.labels.same(tenant.id, target, body.label)
        : undefined
    let recorded: Recorded
    if (same !== undefined) recorded = { id: same, contributed: [], suppressed: [] }
    else {
      recorded = yield* record()
      queued = yield* emitLabel(recorded.id)
    }
    const answered = answer(recorded)
    yield* idem.complete(answered)
    return answered
  })
  if (queued > 0) ctx.webhooks.nudge()
  return out

  /** `label.created`, and `review.resolved` when the event waited in the review queue (the outbox). */
  function* emitLabel(id: number): Work<number> {
    const data = {
      label_id: String(id),
      label: body.label,
      event_id: body.event_id ?? null,
      user_id: row.userId,
      by: actor,
    }
    const subject = { eventId: body.event_id ?? null, ...row }
    let n = yield* emit(store.webhookOutbox, tenant.id, now, 'label.created', data, subject)
    if (queuedForReview)
      n += yield* emit(store.webhookOutbox, tenant.id, now, 'review.resolved', data, subject)
    return n
  }

  /** Writes the label and what it causes; returns what it contributed and suppressed. */
  function* record(): Work<Recorded> {
    const id = yield* store.privacy.addLabel(tenant.id, {
      eventId: body.event_id ?? null,
      label: body.label,
      note: body.note ?? null,
      ...row,
      createdMs: now,
    })
    if (body.label === 'legit') {
      yield* store.privacy.addSuppressions(
        tenant.id,
        local.map((e) => ({
          action: 'legit' as const,
          entityType: e.kind,
          valueHash: suppressionHash(hasher, e),
          eventId: body.event_id ?? null,
          createdMs: now,
        })),
      )
      return { id, contributed: [], suppressed: local }
    }
    if (body.event_id !== undefined) {
      // A confirmed fraud counts toward its ASN's fraud rate once, whatever its verdict was.
      const bad = yield* store.events.markAsnBad(tenant.id, body.event_id)
      if (bad) yield* addAsnBad(tenant.id, bad.asn, bad.createdMs)
    }
    if (!contributes || body.event_id === undefined) return { id, contributed: [], suppressed: [] }
    const contributed = shareable.filter((_, i) => !already.has(hashes[i]!))
    yield* store.network.addFlags({
      tenantId: tenant.id,
      entities: contributed,
      label: body.label,
      eventId: body.event_id,
      nowMs: now,
    })
    return { id, contributed, suppressed: [] }
  }
}

/** Labels as the API shows them: the target, never an identifier hash. */
export function labelView(l: LabelRecord) {
  return {
    label_id: String(l.id),
    label: l.label,
    event_id: l.eventId,
    user_id: l.userId,
    note: l.note,
    created_ms: l.createdMs,
  }
}

export async function listLabels(ctx: TenantContext, filter: LabelFilter) {
  const { labels, total } = await ctx.store.labels.list(ctx.tenant.id, filter)
  return { labels: labels.map(labelView), total, limit: filter.limit, offset: filter.offset }
}

/**
 * Withdraws a label. The flags it put in the operator network go with it, and each of those entities
 * is recorded in the suppression audit (`withdraw`), so this tenant never contributes it again and a
 * restore from an older backup can be told about it. A legit label's local suppressions stay: they
 * only ever lowered this tenant's own risk.
 */
export async function withdrawLabel(ctx: TenantContext, rawId: string) {
  const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : Number.NaN
  const found = Number.isSafeInteger(id) ? await ctx.store.labels.get(ctx.tenant.id, id) : undefined
  if (!found) throw notFound(`label ${rawId} not found`)
  const now = ctx.clock.now()
  const { store, tenant, hasher } = ctx
  let queued = 0
  const removed = await store.db.tx(function* () {
    if (!(yield* store.labels.remove(tenant.id, id))) return null
    const flags = found.eventId ? yield* store.network.removeFlags(tenant.id, found.eventId, found.label) : []
    yield* store.privacy.addSuppressions(
      tenant.id,
      flags.map((e) => ({
        action: 'withdraw' as const,
        entityType: e.kind,
        valueHash: suppressionHash(hasher, e),
        eventId: found.eventId,
        createdMs: now,
      })),
    )
    // `label.withdrawn` commits with the withdrawal (the outbox), named by ids only.
    const data = {
      label_id: String(found.id),
      label: found.label,
      event_id: found.eventId,
      user_id: found.userId,
    }
    const subject = {
      eventId: found.eventId,
      userId: found.userId,
      ipHash: found.ipHash,
      emailHash: found.emailHash,
      deviceId: found.deviceId,
    }
    queued = yield* emit(store.webhookOutbox, tenant.id, now, 'label.withdrawn', data, subject)
    return flags
  })
  if (queued > 0) ctx.webhooks.nudge()
  if (removed === null) throw notFound(`label ${rawId} not found`)
  return { ...labelView(found), withdrawn: true, network: { withdrawn: removed.map((e) => e.kind) } }
}
