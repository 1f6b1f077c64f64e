import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Op } from '../../src/store/engine/db.js'
import { lockEntities } from '../../src/store/engine/entity-locks.js'

/** The lock id every node derives from a key: the first 8 bytes of its SHA-256, signed. */
function expectedId(key: string): bigint {
  return createHash('sha256').update(key).digest().readBigInt64BE(0)
}

describe('entity locks', () => {
  it('locks each key once by the signed first 8 bytes of its SHA-256, in ascending order', () => {
    // Nodes of different versions lock the same entities: the ids must not change between releases.
    const keys = ['ip:1', 'fp:abc', 'ip:1', 'dev:é', ...Array.from({ length: 40 }, (_, i) => `k${i}`)]
    const work = lockEntities('postgres', keys)
    const op = work.next().value as Op
    const ids = [...new Set(keys.map(expectedId))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    expect(ids.some((id) => id < 0n) && ids.some((id) => id > 0n)).toBe(true)
    expect(op.params).toEqual([`{${ids.join(',')}}`])
    expect(op.blind).toBe(true)
    expect(work.next(1).done).toBe(true)
  })

  it('takes no lock on SQLite or without keys', () => {
    expect(lockEntities('sqlite', ['ip:1']).next().done).toBe(true)
    expect(lockEntities('postgres', []).next().done).toBe(true)
  })
})
