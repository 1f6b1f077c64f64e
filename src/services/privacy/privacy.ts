import type { TenantContext } from '../../context.js'
import { badRequest, tenantGone } from '../../errors.js'
import { parseIp } from '../../intel/ip/normalize.js'
import { holdTenant } from '../../store/access/tenant-hold.js'
import type { ErasedCounts, SubjectKeys } from '../../store/privacy/privacy.js'
import type { EntityKind } from '../../util/entities.js'
import { eventView } from '../decisions/events.js'
import { emailKey, phoneKeys } from '../identifiers/evaluate.js'
import { lookupView } from '../identifiers/identifier-checks.js'
import { suppressionHash } from '../network/entities.js'
import { type Idem, NO_IDEM } from '../runtime/idempotency.js'
import { mergeExports } from './subject-merge.js'

export interface SubjectBody {
  email?: string
  phone?: string
  ip?: string
  device_id?: string
  user_id?: string
  limit?: number
}

/** Tables erasure writes to; reclaimed afterwards so the freed bytes leave the storage. */
export const ERASED_TABLES = [
  'events',
  'lookups',
  'list_entries',
  'labels',
  'device_observations',
  'device_links',
  'device_link_counts',
  'ip_accounts',
  'beacon_observations',
  'idempotency_keys',
  'idempotency_events',
  'webhook_messages',
  'webhook_deliveries',
] as const

/**
 * The stored forms of a subject's identifiers. Email goes through the same canonicaliser as every
 * write, so any alias spelling reaches rows written for any other spelling of the mailbox. A phone in
 * national format has one stored form per country it is valid in (the body names no country): the
 * first goes in `keys`, the others in `otherPhoneHashes`, each matched on its own.
 */
export function subjectKeys(
  ctx: TenantContext,
  body: SubjectBody,
): {
  keys: SubjectKeys
  otherPhoneHashes: string[]
  entities: { kind: EntityKind; valueHash: string }[]
} {
  const keys: SubjectKeys = {}
  const otherPhoneHashes: string[] = []
  const entities: { kind: EntityKind; valueHash: string }[] = []
  if (body.email !== undefined) {
    const a = ctx.intel.email.analyze(body.email)
    keys.emailHash = ctx.hasher.entity('email', emailKey(a, body.email).key)
    entities.push({ kind: 'email', valueHash: keys.emailHash })
  }
  if (body.phone !== undefined) {
    const [first, ...others] = phoneKeys(ctx.intel, body.phone).map((k) => ctx.hasher.entity('phone', k))
    keys.phoneHash = first!
    otherPhoneHashes.push(...others)
    for (const valueHash of [first!, ...others]) entities.push({ kind: 'phone', valueHash })
  }
  if (body.ip !== undefined) {
    const ip = parseIp(body.ip)
    if (!ip) throw badRequest('body.ip is not a valid IP address')
    keys.ipHash = ctx.hasher.entity('ip', ip.ip)
    entities.push({ kind: 'ip', valueHash: keys.ipHash })
  }
  if (body.device_id !== undefined) {
    keys.deviceId = body.device_id
    entities.push({ kind: 'device', valueHash: ctx.hasher.entity('device', body.device_id) })
  }
  if (body.user_id !== undefined) {
    keys.userId = body.user_id
    entities.push({ kind: 'user', valueHash: ctx.hasher.entity('user', body.user_id) })
  }
  if (entities.length === 0) throw badRequest('send at least one of email, phone, ip, device_id, user_id')
  return { keys, otherPhoneHashes, entities }
}

export async function exportSubject(ctx: TenantContext, body: SubjectBody) {
  const { keys, otherPhoneHashes } = subjectKeys(ctx, body)
  const limit = body.limit ?? 1000
  const parts = [await ctx.store.privacy.export(ctx.tenant.id, keys, limit)]
  for (const phoneHash of otherPhoneHashes)
    parts.push(await ctx.store.privacy.export(ctx.tenant.id, { phoneHash }, limit))
  const x = mergeExports(parts, limit)
  return {
    counts: {
      events: x.eventCount,
      lookups: x.lookupCount,
      list_entries: x.listEntries.length,
      labels: x.labels.length,
      device_observations: x.observationCount,
      devices: x.devices.length,
      beacons: x.beacons.length,
      idempotent_responses: new Set(x.idempotent.map((r) => r['key_hash'])).size,
    },
    events: x.events.map(eventView),
    lookups: x.lookups.map(lookupView),
    // Rows read by column name: the column types are those of the migrations.
    list_entries: x.listEntries.map((e) => ({
      id: String(e['id']),
      list: e['list'] as string,
      type: e['type'] as string,
      hint: e['hint'] as string,
      createdMs: Number(e['created_ms']),
    })),
    device_observations: x.observations.map((o) => ({
      eventId: o['event_id'] as string,
      createdMs: Number(o['created_ms']),
      deviceId: o['device_id'] as string | null,
      resolvedId: o['resolved_id'] as string,
      rung: Number(o['rung']),
      ipPrefix: o['ip_prefix'] as string | null,
      asn: o['asn'] === null ? null : Number(o['asn']),
      country: o['country'] as string | null,
      connectionType: o['connection_type'] as string | null,
      verdict: o['verdict'] as string,
    })),
    devices: x.devices.map((d) => ({
      resolvedId: d['resolved_id'] as string,
      firstSeenMs: Number(d['first_seen_ms']),
      lastSeenMs: Number(d['last_seen_ms']),
      observations: Number(d['observations']),
      distinctIps: Number(d['distinct_ips']),
      accounts: Number(d['accounts']),
    })),
    beacons: x.beacons.map((b) => ({
      visitId: b['visit_id'] as string,
      createdMs: Number(b['created_ms']),
      deviceId: b['device_id'] as string,
      os: b['os'] as string | null,
      browser: b['browser'] as string | null,
      mobile: Number(b['mobile']) === 1,
      flags: JSON.parse(String(b['flags'])) as Record<string, unknown>,
      ja4: (b['ja4'] as string | null) ?? null,
    })),
    // Kept 24 hours for Idempotency-Key retries, sealed under the caller's key: listed by event.
    idempotent_responses: x.idempotent.map((r) => ({
      eventId: r['event_id'] as string,
      createdMs: Number(r['created_ms']),
    })),
    labels: x.labels.map((l) => ({
      id: String(l.id),
      eventId: l.eventId,
      label: l.label,
      note: l.note,
      createdMs: l.createdMs,
    })),
  }
}

/**
 * Erasure: deletes every matching row of the tenant and writes one `forget` suppression per identifier
 * in one transaction, then makes the storage give the bytes back (see docs/privacy.md).
 */
export async function forgetSubject(ctx: TenantContext, body: SubjectBody, idem: Idem = NO_IDEM) {
  const { keys, otherPhoneHashes, entities } = subjectKeys(ctx, body)
  const now = ctx.clock.now()
  const { store, tenant, hasher } = ctx
  const storageNow = () => (store.compaction.needed ? 'pending' : 'reclaimed')
  const answer = (deleted: ErasedCounts, storage: 'reclaimed' | 'pending') => ({
    // `list_entries` is the name /v1/subject uses; `listEntries` stays until v2 (docs/api-conventions.md).
    deleted: (({ idempotentResponses, ...rest }) => ({
      ...rest,
      list_entries: deleted.listEntries,
      idempotent_responses: idempotentResponses,
    }))(deleted),
    suppressions: entities.length,
    storage,
  })
  const deleted = await store.db.tx(function* () {
    // Before anything is written: IP velocity's pairs have no tenant foreign key (schema/tenant-keys.ts).
    if (!(yield* holdTenant(store.db.dialect, tenant.id))) throw tenantGone()
    yield* idem.claim(now)
    const counts = yield* store.privacy.erase(tenant.id, keys)
    // Each further reading of a national phone number; rows already deleted are not counted twice.
    for (const phoneHash of otherPhoneHashes) {
      const more = yield* store.privacy.erase(tenant.id, { phoneHash })
      for (const k of Object.keys(more) as (keyof ErasedCounts)[]) counts[k] += more[k]
    }
    yield* store.compaction.mark(ERASED_TABLES, now)
    yield* store.privacy.addSuppressions(
      tenant.id,
      entities.map((e) => ({
        action: 'forget' as const,
        entityType: e.kind,
        valueHash: suppressionHash(hasher, e),
        eventId: null,
        createdMs: now,
      })),
    )
    // A retry replays this answer; the storage state it reports is the one expected after reclaim.
    yield* idem.complete(answer(counts, storageNow()))
    return counts
  })
  // Where the engine's reclaim leaves bytes behind, the storage-compaction job finishes the erasure.
  let storage: 'reclaimed' | 'pending' = storageNow()
  try {
    await ctx.store.db.reclaim(ERASED_TABLES)
  } catch {
    // A long-running reader held the WAL; the rows are gone from every query and the next erasure
    // or checkpoint reclaims the space.
    storage = 'pending'
  }
  return answer(deleted, storage)
}

export async function listSuppressions(ctx: TenantContext, limit: number) {
  return { suppressions: await ctx.store.privacy.suppressions(ctx.tenant.id, limit), limit }
}
