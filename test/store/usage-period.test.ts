import { describe, expect, it } from 'vitest'
import { usagePeriod } from '../../src/store/access/usage.js'

describe('usagePeriod', () => {
  // In this order: the remembered month must never answer for a time outside it, either side.
  it.each([
    [Date.UTC(2026, 10, 15), '2026-11'],
    [Date.UTC(2026, 10, 1), '2026-11'],
    [Date.UTC(2026, 11, 1) - 1, '2026-11'],
    [Date.UTC(2026, 11, 1), '2026-12'],
    [Date.UTC(2026, 11, 1) - 1, '2026-11'],
    [Date.UTC(2027, 0, 1), '2027-01'],
    [Date.UTC(2026, 11, 31, 23, 59, 59, 999), '2026-12'],
    [Date.UTC(2024, 1, 29, 12), '2024-02'],
    [Date.UTC(2024, 2, 1), '2024-03'],
    [0, '1970-01'],
  ])('%i is in %s', (ms, period) => {
    expect(usagePeriod(ms)).toBe(period)
    expect(usagePeriod(ms)).toBe(new Date(ms).toISOString().slice(0, 7))
  })
})
