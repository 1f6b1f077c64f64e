import { randomBytesPooled } from './random.js'

/**
 * RFC 9562 UUIDv7: a millisecond timestamp followed by random bits. Event ids sort by time, so the
 * primary-key index grows at its end instead of dirtying a random page on every insert.
 */
export function uuidv7(nowMs: number): string {
  const b = randomBytesPooled(16)
  // 48-bit millisecond timestamp, big-endian (plain arithmetic: it fits a double exactly).
  let ts = nowMs
  for (let i = 5; i >= 0; i--) {
    b[i] = ts % 256
    ts = Math.floor(ts / 256)
  }
  b[6] = (b[6]! & 0x0f) | 0x70
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
