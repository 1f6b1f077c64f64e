import { randomBytesPooled } from '../../util/random.js'
import type { Hasher } from '../../util/secrets.js'
import { safeEqual } from '../../util/secrets.js'

/** How long a device token stays valid after it was issued. */
export const TOKEN_VALIDITY_MS = 400 * 24 * 3600_000

const PREFIX = 'dt1'
const PURPOSE = 'device-token'
const B64URL = /^[A-Za-z0-9_-]+$/
const IDENTITY = /^dv_[A-Za-z0-9_-]{22}$/

export type TokenRejection = 'malformed' | 'bad_signature' | 'expired'

export type TokenCheck =
  | { ok: true; identity: string; issuedMs: number }
  | { ok: false; reason: TokenRejection }

/** A new random device identity: 128 bits, never derived from anything the client sent. */
export const newDeviceIdentity = (): string => `dv_${randomBytesPooled(16).toString('base64url')}`

const signature = (hasher: Hasher, payload: string) => hasher.mac(PURPOSE, payload).toString('base64url')

/**
 * `dt1.<payload>.<signature>`: the payload is base64url JSON of tenant, identity and issue time; the
 * signature is the base64url HMAC of the payload text exactly as sent, so any change to any character
 * changes either the signed text or the signature text.
 */
export function signDeviceToken(
  hasher: Hasher,
  tenantId: string,
  identity: string,
  issuedMs: number,
): string {
  // Whole milliseconds: verification requires an integer, and a clock may report fractions.
  const i = Math.floor(issuedMs)
  const payload = Buffer.from(JSON.stringify({ t: tenantId, d: identity, i })).toString('base64url')
  return `${PREFIX}.${payload}.${signature(hasher, payload)}`
}

/** Verifies a replayed token for this tenant at `now`; a token of another tenant is a bad signature. */
export function verifyDeviceToken(hasher: Hasher, tenantId: string, token: string, now: number): TokenCheck {
  const parts = token.split('.')
  if (parts.length !== 3) return { ok: false, reason: 'malformed' }
  const [prefix, payload, sig] = parts as [string, string, string]
  if (prefix !== PREFIX || !B64URL.test(payload) || !B64URL.test(sig) || sig.length !== 43) {
    return { ok: false, reason: 'malformed' }
  }
  if (!safeEqual(sig, signature(hasher, payload))) return { ok: false, reason: 'bad_signature' }
  let body: unknown
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  const b = body as { t?: unknown; d?: unknown; i?: unknown }
  if (
    typeof b.t !== 'string' ||
    typeof b.d !== 'string' ||
    !IDENTITY.test(b.d) ||
    !Number.isSafeInteger(b.i)
  ) {
    return { ok: false, reason: 'malformed' }
  }
  if (b.t !== tenantId) return { ok: false, reason: 'bad_signature' }
  const issued = b.i as number
  if (now - issued > TOKEN_VALIDITY_MS) return { ok: false, reason: 'expired' }
  return { ok: true, identity: b.d, issuedMs: issued }
}
