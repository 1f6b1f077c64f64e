import type { Tenant } from '../../store/access/tenants.js'
import type { Store } from '../../store/index.js'
import { safeEqual, sha256Hex } from '../../util/secrets.js'

export interface AuthContext {
  tenant: Tenant
  keyId: string
  /** A publishable key (pk_…): valid only on the beacon route, only from `origins`. */
  publishable: boolean
  origins: string[]
}

/** API keys are high-entropy random strings, so an unkeyed SHA-256 is a sufficient one-way hash. */
export const hashApiKey = (key: string) => sha256Hex(key)

/** Last-use writes per store: at most one a minute per key and process, so a busy key costs no write per request. */
const touched = new WeakMap<Store, Map<string, number>>()
const TOUCH_EVERY_MS = 60_000

function noteUse(store: Store, keyId: string, now: number): void {
  let seen = touched.get(store)
  if (!seen) {
    seen = new Map()
    touched.set(store, seen)
  }
  const last = seen.get(keyId)
  if (last !== undefined && now - last < TOUCH_EVERY_MS) return
  if (seen.size > 10_000) seen.clear()
  seen.set(keyId, now)
  // Informational only: a failed write must never fail the request.
  store.tenants.touchKey(keyId, now).catch(() => {})
}

/** `hash` is `hashApiKey(rawKey)` when the caller has it already (the guard hashes each key once). */
export async function authenticate(
  store: Store,
  rawKey: string,
  now: number = Date.now(),
  hash?: string,
): Promise<AuthContext | null> {
  if (rawKey.length < 8 || rawKey.length > 200) return null
  hash ??= hashApiKey(rawKey)
  const found = await store.tenants.findByKeyHash(hash)
  // The index lookup already matched; the constant-time comparison guards against any
  // collation or trailing-space surprises in the storage engine.
  if (!found || !safeEqual(found.keyHash, hash) || found.revokedMs !== null) return null
  noteUse(store, found.keyId, now)
  return {
    tenant: found.tenant,
    keyId: found.keyId,
    publishable: found.kind === 'publishable',
    origins: found.origins,
  }
}

/** Reads the key from `x-api-key`, or from `Authorization: Bearer <key>`. */
export function extractApiKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const direct = headers['x-api-key']
  if (typeof direct === 'string' && direct.trim()) return direct.trim()
  const auth = headers['authorization']
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim())
    if (m?.[1]) return m[1].trim()
  }
  return undefined
}
