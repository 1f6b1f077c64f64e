import type { RequestContext, TenantContext } from '../../context.js'
import { badRequest, notFound } from '../../errors.js'
import { canonicalizeEmail } from '../../intel/email/canonical.js'
import { cidrText, networkOf, parseCidr } from '../../intel/ip/cidr.js'
import { parseIp } from '../../intel/ip/normalize.js'
import type { Work } from '../../store/engine/db.js'
import type {
  IpRange,
  ListEntry,
  ListFilter,
  ListName,
  NewListEntry,
  RangeKeys,
} from '../../store/rules/lists.js'
import type { ListEntryType } from '../../util/entities.js'
import { maskEmail, maskPhone } from '../../util/mask.js'
import type { Hasher } from '../../util/secrets.js'
import { emit } from '../webhooks/events.js'
import { attributeHash } from './attribute-hash.js'

export interface ListInput {
  list: ListName
  type: ListEntryType
  value: string
  /** When the entry stops matching (ms since the epoch); absent: never. */
  expires_ms?: number
  note?: string
}

/**
 * The stored form of a list value: email, ip and phone become keyed hashes of their canonical form (so
 * any alias of a mailbox, or any spelling of an address or number, matches) with a masked hint; device
 * and user ids are the caller's own identifiers and are kept as sent. An attribute value becomes the
 * keyed hash a hashed attribute's value gets (rules/attribute-hash.ts), shown as that hash. An ip value with a `/` is a CIDR
 * range: the keyed hash of its canonical network and length (docs/privacy.md: no listed address is
 * stored raw), shown in full when it is at least as wide as the /24 (/48) prefix events keep, masked
 * like an address when narrower. Returns an error message for unusable values.
 */
export function listKey(
  ctx: Pick<RequestContext, 'hasher' | 'intel'> & { tenant: { id: string } },
  type: ListEntryType,
  value: string,
): { valueKey: string; hint: string; range?: IpRange } | string {
  const { hasher } = ctx
  if (type === 'attribute') {
    // As a request sends it: the hash is of the exact string (a number's or boolean's text).
    const hash = attributeHash(hasher, ctx.tenant.id).hash(value)
    return { valueKey: hash, hint: hash }
  }
  if (type === 'email') {
    const c = canonicalizeEmail(value)
    if (!c) return 'value is not a valid email address'
    return {
      valueKey: hasher.entity('email', c.canonical),
      hint: maskEmail(c.canonicalLocal, c.canonicalDomain),
    }
  }
  if (type === 'ip') {
    if (value.includes('/')) return rangeKey(hasher, value)
    const ip = parseIp(value)
    if (!ip) return 'value is not a valid IP address'
    return { valueKey: hasher.entity('ip', ip.ip), hint: ip.hint }
  }
  if (type === 'phone') {
    // A list has no country to read a national number in: the number must be international.
    const e164 = ctx.intel.phone.analyze(value).e164
    if (!e164) return 'value is not a phone number in international form (+ and country code)'
    return { valueKey: hasher.entity('phone', e164), hint: maskPhone(e164) }
  }
  const trimmed = value.trim()
  if (!trimmed) return 'value must not be blank'
  return { valueKey: trimmed, hint: trimmed }
}

/** Ranges at least this wide are shown in full: events keep the same /24 (/48) prefix (docs/privacy.md). */
const SHOWN_FROM = { 4: 24, 6: 48 } as const

function rangeKey(
  hasher: Hasher,
  value: string,
): { valueKey: string; hint: string; range?: IpRange } | string {
  const c = parseCidr(value)
  if (typeof c === 'string') return c
  // A full-length range is one address: listed, matched and masked exactly like it.
  if (c.len === (c.version === 4 ? 32 : 128)) return listKeyOfIp(hasher, c.text.slice(0, c.text.indexOf('/')))
  const hint =
    c.len <= SHOWN_FROM[c.version]
      ? c.text
      : `${parseIp(c.text.slice(0, c.text.indexOf('/')))?.hint ?? 'x'}/${c.len}`
  return { valueKey: rangeHash(hasher, c.text), hint, range: { version: c.version, len: c.len } }
}

function listKeyOfIp(hasher: Hasher, ip: string) {
  const p = parseIp(ip)
  return p ? { valueKey: hasher.entity('ip', p.ip), hint: p.hint } : 'value is not a valid IP address'
}

/** A range's key: distinct from any address's, which never contains a `/`. */
const rangeHash = (hasher: Hasher, cidr: string) => hasher.entity('ip', cidr)

/** The keys an address is matched under for each range length a tenant lists (ListStore.match). */
export function ipRangeKeys(hasher: Hasher, ip: { version: 4 | 6; value: bigint }): RangeKeys {
  return (lengths) =>
    (lengths.get(ip.version) ?? []).map((len) => ({
      type: 'ip' as const,
      valueKey: rangeHash(hasher, cidrText(networkOf(ip.value, ip.version, len), ip.version, len)),
    }))
}

export interface ListEntryView {
  id: string
  list: ListName
  type: ListEntryType
  hint: string
  createdMs: number
  value?: string
  expires_ms?: number
  note?: string
}

/** Email and ip entries show only their hint; device and user entries show their value. */
export function viewEntry(e: ListEntry, echo?: string): ListEntryView {
  const v: ListEntryView = {
    id: String(e.id),
    list: e.list,
    type: e.type,
    hint: e.hint,
    createdMs: e.createdMs,
  }
  if (echo !== undefined) v.value = echo
  else if (e.type === 'device' || e.type === 'user') v.value = e.valueKey
  if (e.expiresMs !== null) v.expires_ms = e.expiresMs
  if (e.note !== null) v.note = e.note
  return v
}

function toNew(ctx: TenantContext, input: ListInput, field: string): NewListEntry {
  if (input.type === 'attribute' && (input.list === 'allow' || input.list === 'block'))
    throw badRequest(
      `${field.replace(/\.value$/, '')}.list: attribute values go on a list of your own, which rules read as lists.attributes.<key>; allow and block take identifiers`,
    )
  const key = listKey(ctx, input.type, input.value)
  if (typeof key === 'string') throw badRequest(`${field}: ${key}`)
  if (input.expires_ms !== undefined && input.expires_ms <= ctx.clock.now())
    throw badRequest(`${field.replace(/\.value$/, '')}.expires_ms must be in the future`)
  return {
    list: input.list,
    type: input.type,
    ...key,
    expiresMs: input.expires_ms ?? null,
    note: input.note?.trim() || null,
  }
}

/** The outbox hook of a list change: the message commits with the change. */
function listEvent(
  ctx: Pick<TenantContext, 'store' | 'webhooks'> & { tenant: { id: string } },
  type: 'list.entry_added' | 'list.entry_removed',
  nowMs: number,
) {
  const counter = { queued: 0 }
  const hook = function* (e: ListEntry): Work<void> {
    counter.queued += yield* emitListEvent(ctx.store, ctx.tenant.id, type, nowMs, e)
  }
  return { hook, nudge: () => counter.queued > 0 && ctx.webhooks.nudge() }
}

/**
 * One list change's message in the outbox. Email and ip entries are named by their keyed hash, device
 * and user entries by the caller's own identifier.
 */
function* emitListEvent(
  store: TenantContext['store'],
  tenantId: string,
  type: 'list.entry_added' | 'list.entry_removed' | 'list.entry_expired',
  nowMs: number,
  e: ListEntry,
): Work<number> {
  const hashed = e.type === 'email' || e.type === 'ip' || e.type === 'phone' || e.type === 'attribute'
  const data = {
    entry_id: String(e.id),
    list: e.list,
    type: e.type,
    ...(hashed ? { value_hash: e.valueKey } : { value: e.valueKey }),
  }
  const subject = {
    emailHash: e.type === 'email' ? e.valueKey : null,
    ipHash: e.type === 'ip' && !e.range ? e.valueKey : null,
    phoneHash: e.type === 'phone' ? e.valueKey : null,
    deviceId: e.type === 'device' ? e.valueKey : null,
    userId: e.type === 'user' ? e.valueKey : null,
  }
  return yield* emit(store.webhookOutbox, tenantId, nowMs, type, data, subject)
}

/**
 * Deletes the list entries whose expiry passed (they stopped matching then already), each with its
 * `list.entry_expired` message in the same transaction. Run by the list-expiry job.
 */
export async function expireListEntries(ctx: {
  store: TenantContext['store']
  clock: TenantContext['clock']
}) {
  const now = ctx.clock.now()
  let total = 0
  for (;;) {
    const n = await ctx.store.lists.expire(now, (tenantId, e) =>
      emitListEvent(ctx.store, tenantId, 'list.entry_expired', now, e),
    )
    total += n
    if (n < 500) return total
  }
}

export async function addListEntry(ctx: TenantContext, input: ListInput): Promise<ListEntryView> {
  const now = ctx.clock.now()
  const events = listEvent(ctx, 'list.entry_added', now)
  const [entry] = await ctx.store.lists.addMany(
    ctx.tenant.id,
    [toNew(ctx, input, 'body.value')],
    now,
    events.hook,
  )
  events.nudge()
  return viewEntry(entry!, input.value)
}

/** All rows are validated before anything is written; then they are written in one transaction. */
export async function addListEntries(
  ctx: TenantContext,
  rows: readonly ListInput[],
): Promise<ListEntryView[]> {
  const prepared = rows.map((r, i) => toNew(ctx, r, `body.rows[${i}].value`))
  const now = ctx.clock.now()
  const events = listEvent(ctx, 'list.entry_added', now)
  const entries = await ctx.store.lists.addMany(ctx.tenant.id, prepared, now, events.hook)
  events.nudge()
  return entries.map((e, i) => viewEntry(e, rows[i]?.value))
}

export async function listEntries(
  ctx: TenantContext,
  limit: number,
  offset: number,
  filter: Omit<ListFilter, 'nowMs'> = {},
) {
  const { entries, total } = await ctx.store.lists.list(ctx.tenant.id, limit, offset, {
    ...filter,
    nowMs: ctx.clock.now(),
  })
  return { entries: entries.map((e) => viewEntry(e)), total, limit, offset }
}

export async function removeListEntry(ctx: TenantContext, id: number): Promise<ListEntryView> {
  const events = listEvent(ctx, 'list.entry_removed', ctx.clock.now())
  const removed = await ctx.store.lists.remove(ctx.tenant.id, id, events.hook)
  if (!removed) throw notFound(`list entry ${id} not found`)
  events.nudge()
  return viewEntry(removed)
}
