import type { Store } from '../store/index.js'
import type { ApiKeyRecord, Tenant } from '../store/tenants.js'
import type { Clock } from '../util/clock.js'
import { randomToken } from '../util/secrets.js'
import { hashApiKey } from './auth.js'

export const API_KEY_PREFIX = 'vk_'
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
  id?: string
  shareNetwork?: boolean
  rateLimit?: number
  monthlyQuota?: number
}

export class TenantAdminError extends Error {}

export async function issueKey(store: Store, clock: Clock, tenantId: string): Promise<IssuedKey> {
  const apiKey = `${API_KEY_PREFIX}${randomToken(40)}`
  const record: ApiKeyRecord = {
    id: `key_${randomToken(16)}`,
    tenantId,
    prefix: apiKey.slice(0, 10),
    createdMs: clock.now(),
    revokedMs: null,
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
  const next = await issueKey(store, clock, old.tenantId)
  await store.tenants.revokeKey(keyId, clock.now())
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
