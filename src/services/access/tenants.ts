import type { ApiKeyRecord, Tenant } from '../../store/access/tenants.js'
import type { Store } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { randomToken } from '../../util/secrets.js'
import { hashApiKey } from './auth.js'

export const API_KEY_PREFIX = 'vk_'
/** Publishable keys go into web pages: they work only on the beacon, only from their origins. */
export const PUBLISHABLE_KEY_PREFIX = 'pk_'
/** A new tenant's limits unless `tenants create` sets them: requests per minute per key, metered units a month. */
export const DEFAULT_RATE_LIMIT = 240
export const DEFAULT_MONTHLY_QUOTA = 10_000

export interface IssuedKey {
  keyId: string
  tenantId: string
  apiKey: string
}

export interface NewTenant {
  name: string
  /** Refuse the name when a tenant already has it (the CLI's default). */
  uniqueName?: boolean
  id?: string
  shareNetwork?: boolean
  rateLimit?: number
  monthlyQuota?: number
}

export class TenantAdminError extends Error {}

/**
 * A page origin as browsers send it in `Origin`: scheme, host and port only (`https://shop.example`).
 * Returns the normalised form, or throws for anything else (paths, wildcards, `null`).
 */
export function normaliseOrigin(raw: string): string {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new TenantAdminError(`not an origin: ${raw}`)
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin === 'null')
    throw new TenantAdminError(`origin must be http(s)://host[:port]: ${raw}`)
  if (url.pathname !== '/' || url.search || url.hash || url.username || raw.trim().endsWith('/'))
    throw new TenantAdminError(`origin must have no path, query or trailing slash: ${raw}`)
  return url.origin
}

export interface KeyOptions {
  /** A pk_ key for the browser beacon, usable only from these origins (at least one). */
  publishable?: { origins: string[] }
}

export async function issueKey(
  store: Store,
  clock: Clock,
  tenantId: string,
  options: KeyOptions = {},
): Promise<IssuedKey> {
  const pk = options.publishable
  if (pk && pk.origins.length === 0) throw new TenantAdminError('a publishable key needs at least one origin')
  const origins = pk ? [...new Set(pk.origins.map(normaliseOrigin))] : []
  const apiKey = `${pk ? PUBLISHABLE_KEY_PREFIX : API_KEY_PREFIX}${randomToken(40)}`
  const record: ApiKeyRecord = {
    id: `key_${randomToken(16)}`,
    tenantId,
    prefix: apiKey.slice(0, 10),
    createdMs: clock.now(),
    revokedMs: null,
    kind: pk ? 'publishable' : 'secret',
    origins,
  }
  await store.tenants.addKey(record, hashApiKey(apiKey))
  return { keyId: record.id, tenantId, apiKey }
}

export async function createTenant(
  store: Store,
  clock: Clock,
  input: NewTenant,
): Promise<{ tenant: Tenant } & IssuedKey> {
  const name = input.name.trim()
  if (!name) throw new TenantAdminError('tenant name must not be blank')
  if (input.uniqueName && (await store.tenants.findByName(name)).length > 0)
    throw new TenantAdminError(
      `a tenant named "${name}" already exists (verdict tenants list); pass --allow-duplicate-name to create another`,
    )
  for (const [field, v] of [
    ['rate limit', input.rateLimit],
    ['monthly quota', input.monthlyQuota],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
      throw new TenantAdminError(`${field} must be a positive integer`)
  }
  const tenant: Tenant = {
    id: input.id ?? `tn_${randomToken(16)}`,
    name,
    shareNetwork: input.shareNetwork ?? false,
    rateLimit: input.rateLimit ?? DEFAULT_RATE_LIMIT,
    monthlyQuota: input.monthlyQuota ?? DEFAULT_MONTHLY_QUOTA,
    createdMs: clock.now(),
  }
  await store.tenants.create(tenant)
  const key = await issueKey(store, clock, tenant.id)
  return { tenant, ...key }
}

export async function rotateKey(
  store: Store,
  clock: Clock,
  keyId: string,
): Promise<IssuedKey & { rotatedKeyId: string }> {
  const old = await store.tenants.getKey(keyId)
  if (!old) throw new TenantAdminError(`key ${keyId} not found`)
  if (old.revokedMs !== null) throw new TenantAdminError(`key ${keyId} is already revoked`)
  // The replacement keeps the kind and origins of the key it replaces.
  const next = await issueKey(
    store,
    clock,
    old.tenantId,
    old.kind === 'publishable' ? { publishable: { origins: old.origins ?? [] } } : {},
  )
  await store.tenants.revokeKey(keyId, clock.now(), next.keyId)
  return { ...next, rotatedKeyId: keyId }
}

export async function revokeKey(store: Store, clock: Clock, keyId: string): Promise<void> {
  const old = await store.tenants.getKey(keyId)
  if (!old) throw new TenantAdminError(`key ${keyId} not found`)
  await store.tenants.revokeKey(keyId, clock.now())
}

/**
 * On an empty database: creates tenant `default` and returns its key (printed once by the server).
 * Several processes starting at once may all find the database empty; the fixed id lets exactly one
 * insert succeed, and the others, finding `default` present after their insert failed, return null.
 */
export async function bootstrapDefaultTenant(store: Store, clock: Clock): Promise<IssuedKey | null> {
  if ((await store.tenants.count()) > 0) return null
  try {
    const { tenant: _t, ...key } = await createTenant(store, clock, { id: 'default', name: 'default' })
    return key
  } catch (err) {
    if (await store.tenants.get('default')) return null
    throw err
  }
}
