import { clientBucket, type LimitResult, RateLimiter } from '../runtime/rate-limiter.js'
import { hashApiKey } from './auth.js'

/** Failed API-key attempts (wrong, revoked or missing key) allowed per client IP per minute. */
export const AUTH_FAILURES_PER_MINUTE = 30
/** Keys remembered as valid, so a throttled address can still use a key it really holds. */
const KNOWN_KEYS_MAX = 10_000

/**
 * Makes key guessing cost the guesser: past the failure budget of its address, a request whose key
 * has not authenticated before answers 429 without touching the database. A key that did authenticate
 * (since this process started) still goes through, so a legitimate tenant behind the same address as
 * an attacker keeps working; a guesser cannot produce such a key without already knowing one.
 */
export class AuthThrottle {
  private readonly failures = new RateLimiter()
  /** SHA-256 of keys that authenticated, oldest first (a Map keeps insertion order). */
  private readonly known = new Map<string, true>()

  constructor(private readonly limit = AUTH_FAILURES_PER_MINUTE) {}

  /** The limit state when this request must be refused before any key lookup, else null. */
  refuse(ip: string, rawKey: string | undefined, nowMs: number): LimitResult | null {
    const state = this.failures.peek(clientBucket(ip), this.limit, nowMs)
    if (state.allowed) return null
    if (rawKey !== undefined && this.known.has(hashApiKey(rawKey))) return null
    return state
  }

  failed(ip: string, nowMs: number): void {
    this.failures.hit(clientBucket(ip), this.limit, nowMs)
  }

  /** `keyHash`: hashApiKey of the key, which the guard computed once for the whole request. */
  succeeded(keyHash: string): void {
    this.known.delete(keyHash)
    this.known.set(keyHash, true)
    if (this.known.size > KNOWN_KEYS_MAX) this.known.delete(this.known.keys().next().value as string)
  }

  /** A remembered key that no longer authenticates (revoked, rotated) is forgotten. */
  forget(keyHash: string): void {
    this.known.delete(keyHash)
  }
}
