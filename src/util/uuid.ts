import { randomBytes } from 'node:crypto'

/**
 * RFC 9562 UUIDv7: a millisecond timestamp followed by random bits. Event ids sort by time, so the
 * primary-key index grows at its end instead of dirtying a random page on every insert.
 */
export function uuidv7(nowMs: number): string {
  const b = randomBytes(16)
  const ts = BigInt(nowMs)
  for (let i = 0; i < 6; i++) b[i] = Number((ts >> BigInt(8 * (5 - i))) & 0xffn)
  b[6] = (b[6]! & 0x0f) | 0x70
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
