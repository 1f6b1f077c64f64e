import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { EntityKind } from './entities.js'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** Unbiased random string over [a-zA-Z0-9]. */
export function randomToken(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      // 62 * 4 = 248: rejecting bytes >= 248 keeps every character equally likely.
      if (b < 248 && out.length < length) out += ALPHABET[b % 62]
    }
  }
  return out
}

/** One-shot (crypto.hash): no Hash object per call, which createHash costs on every request's key. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex')
}

/** Constant-time string comparison (length is not secret here: both sides are fixed-size hashes). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  return ab.length === bb.length && timingSafeEqual(ab, bb)
}

/**
 * Keyed one-way hashes of personal data. One key for the whole deployment, so the same entity hashes
 * identically for every tenant and the shared network can match it without seeing it.
 */
export class Hasher {
  constructor(private readonly secret: string) {}

  entity(kind: EntityKind, canonicalValue: string): string {
    return createHmac('sha256', this.secret).update(`${kind}\u0000${canonicalValue}`).digest('hex')
  }

  /** HMAC for non-entity purposes (device tokens), domain-separated by `purpose`. */
  mac(purpose: string, data: string | Buffer): Buffer {
    return createHmac('sha256', this.secret).update(`${purpose}\u0000`).update(data).digest()
  }
}
