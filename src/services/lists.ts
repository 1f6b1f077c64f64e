import { badRequest, notFound } from '../errors.js'
import { canonicalizeEmail } from '../intel/email/canonical.js'
import { parseIp } from '../intel/ip/normalize.js'
import type { ListEntry, ListName, ListType, NewListEntry } from '../store/lists.js'
import { maskEmail } from '../util/mask.js'
import type { Hasher } from '../util/secrets.js'
import type { TenantCtx } from './context.js'

export interface ListInput {
  list: ListName
  type: ListType
  value: string
}

/**
 * The stored form of a list value: email and ip become keyed hashes of their canonical form (so any
 * alias of a mailbox, or any spelling of an address, matches) with a masked hint; device and user ids
 * are the caller's own identifiers and are kept as sent. Returns an error message for unusable values.
 */
export function listKey(
  hasher: Hasher,
  type: ListType,
  value: string,
): { valueKey: string; hint: string } | string {
  if (type === 'email') {
    const c = canonicalizeEmail(value)
    if (!c) return 'value is not a valid email address'
    return {
      valueKey: hasher.entity('email', c.canonical),
      hint: maskEmail(c.canonicalLocal, c.canonicalDomain),
    }
  }
  if (type === 'ip') {
    const ip = parseIp(value)
    if (!ip) return 'value is not a valid IP address'
    return { valueKey: hasher.entity('ip', ip.ip), hint: ip.hint }
  }
  const trimmed = value.trim()
  if (!trimmed) return 'value must not be blank'
  return { valueKey: trimmed, hint: trimmed }
}

export interface ListEntryView {
  id: string
  list: ListName
  type: ListType
  hint: string
  createdMs: number
  value?: string
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
  return v
}

function toNew(ctx: TenantCtx, input: ListInput, field: string): NewListEntry {
  const key = listKey(ctx.hasher, input.type, input.value)
  if (typeof key === 'string') throw badRequest(`${field}: ${key}`)
  return { list: input.list, type: input.type, ...key }
}

export async function addListEntry(ctx: TenantCtx, input: ListInput): Promise<ListEntryView> {
  const [entry] = await ctx.store.lists.addMany(
    ctx.tenant.id,
    [toNew(ctx, input, 'body.value')],
    ctx.clock.now(),
  )
  return viewEntry(entry!, input.value)
}

/** All rows are validated before anything is written; then they are written in one transaction. */
export async function addListEntries(ctx: TenantCtx, rows: readonly ListInput[]): Promise<ListEntryView[]> {
  const prepared = rows.map((r, i) => toNew(ctx, r, `body.rows[${i}].value`))
  const entries = await ctx.store.lists.addMany(ctx.tenant.id, prepared, ctx.clock.now())
  return entries.map((e, i) => viewEntry(e, rows[i]?.value))
}

export async function listEntries(ctx: TenantCtx, limit: number, offset: number) {
  const { entries, total } = await ctx.store.lists.list(ctx.tenant.id, limit, offset)
  return { entries: entries.map((e) => viewEntry(e)), total, limit, offset }
}

export async function removeListEntry(ctx: TenantCtx, id: number): Promise<ListEntryView> {
  const removed = await ctx.store.lists.remove(ctx.tenant.id, id)
  if (!removed) throw notFound(`list entry ${id} not found`)
  return viewEntry(removed)
}
