import { describe, expect, it } from 'vitest'
import { gcra, RateLimiter } from '../../src/services/runtime/rate-limiter.js'

const T0 = Date.UTC(2026, 10, 23, 12, 0, 30)

describe('GCRA rate limiter (in process)', () => {
  it('allows a full budget at once, then one request per minute/limit', () => {
    const l = new RateLimiter()
    const seen = [0, 1, 2].map(() => l.hit('b', 3, T0))
    expect(seen.map((r) => r.allowed)).toEqual([true, true, true])
    expect(seen.map((r) => r.remaining)).toEqual([2, 1, 0])
    // The budget refills one request every 20 s: the reset is when all three are back.
    expect(seen.map((r) => r.resetSeconds)).toEqual([20, 40, 60])
    const over = l.hit('b', 3, T0)
    expect(over).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 20 })
    expect(l.hit('b', 3, T0 + 19_999).allowed).toBe(false)
    expect(l.hit('b', 3, T0 + 20_000)).toMatchObject({ allowed: true, remaining: 0 })
    expect(l.hit('b', 3, T0 + 20_000).allowed).toBe(false)
  })

  it('never lets a window edge double the burst', () => {
    const l = new RateLimiter()
    // Spend the budget just before a minute boundary, then try again just after it.
    const edge = Date.UTC(2026, 10, 23, 12, 1, 0)
    let allowed = 0
    for (let i = 0; i < 10; i++) if (l.hit('b', 10, edge - 1).allowed) allowed++
    for (let i = 0; i < 10; i++) if (l.hit('b', 10, edge + 1).allowed) allowed++
    expect(allowed).toBe(10)
  })

  it('keeps buckets apart, and a refused request costs nothing', () => {
    const l = new RateLimiter()
    expect(l.hit('a', 1, T0).allowed).toBe(true)
    for (let i = 0; i < 5; i++) expect(l.hit('a', 1, T0 + i).allowed).toBe(false)
    expect(l.hit('b', 1, T0).allowed).toBe(true)
    // Refusals did not push the next allowed moment back.
    expect(l.hit('a', 1, T0 + 60_000).allowed).toBe(true)
  })

  it('reads a full budget exactly for limits that do not divide a minute', () => {
    for (const limit of [7, 13, 240, 999]) {
      const first = gcra(undefined, limit, T0).result
      expect(first.remaining).toBe(limit - 1)
      const l = new RateLimiter()
      let allowed = 0
      for (let i = 0; i < limit + 5; i++) if (l.hit('b', limit, T0).allowed) allowed++
      expect(allowed).toBe(limit)
    }
  })

  it('peek answers without counting', () => {
    const l = new RateLimiter()
    expect(l.peek('b', 1, T0).allowed).toBe(true)
    expect(l.peek('b', 1, T0).allowed).toBe(true)
    l.hit('b', 1, T0)
    expect(l.peek('b', 1, T0).allowed).toBe(false)
  })
})

describe('GCRA and a clock that goes back', () => {
  it('starts a bucket afresh rather than refusing for as long as the clock jumped', () => {
    const l = new RateLimiter()
    for (let i = 0; i < 5; i++) l.hit('b', 5, T0)
    expect(l.hit('b', 5, T0).allowed).toBe(false)
    // An hour back (a test clock, an NTP step): the stored state cannot be right any more.
    expect(l.hit('b', 5, T0 - 3_600_000)).toMatchObject({ allowed: true, remaining: 4 })
  })

  it('a spent budget stays spent for a request stamped a moment before the last one', () => {
    // The guard stamps a request before its key lookup and counts it after, so a request stamped
    // first may be counted last; nodes sharing Redis also disagree by a few ms. This one used to
    // find the bucket "more than a window ahead", start it afresh, and be allowed as the 11th of 10.
    const l = new RateLimiter()
    let allowed = 0
    for (let i = 0; i < 10; i++) if (l.hit('b', 10, T0 + 5).allowed) allowed++
    expect(allowed).toBe(10)
    const late = l.hit('b', 10, T0 + 4)
    expect(late).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60, retryAfterSeconds: 6 })
    // Nor does a clock up to a window behind (a node whose clock lags) reopen it.
    expect(l.hit('b', 10, T0 + 5 - 59_999).allowed).toBe(false)
    expect(l.hit('b', 10, T0 + 5).allowed).toBe(false)
    // The refill comes when it is due on the clock that spent the budget.
    expect(l.hit('b', 10, T0 + 5 + 5_999).allowed).toBe(false)
    expect(l.hit('b', 10, T0 + 5 + 6_000).allowed).toBe(true)
  })
})
