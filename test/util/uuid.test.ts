import { describe, expect, it } from 'vitest'
import { uuidv7 } from '../../src/util/uuid.js'

describe('uuidv7', () => {
  it('is a version-7, RFC-variant UUID whose text sorts by time', () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000].map((t) => uuidv7(t))
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0]!.slice(0, 13)).toBe('018bcfe5-6800')
    expect(new Set(Array.from({ length: 1000 }, () => uuidv7(5))).size).toBe(1000)
  })
})
