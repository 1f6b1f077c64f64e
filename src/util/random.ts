import { randomFillSync } from 'node:crypto'

const POOL_SIZE = 4096
const pool = Buffer.alloc(POOL_SIZE)
let offset = POOL_SIZE

/**
 * `n` cryptographically random bytes (a fresh copy) from a pool refilled 4 KB at a time: one call into
 * the CSPRNG per few hundred ids instead of one per id on the scoring path.
 */
export function randomBytesPooled(n: number): Buffer {
  if (n > POOL_SIZE) throw new RangeError('too many random bytes for the pool')
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool)
    offset = 0
  }
  const out = Buffer.from(pool.subarray(offset, offset + n))
  // Bytes handed out are never handed out again.
  pool.fill(0, offset, offset + n)
  offset += n
  return out
}
