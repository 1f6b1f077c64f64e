import { describe, expect, it } from 'vitest'
import { ruleFigures, suggestedWeight, wilson } from '../../src/util/rule-stats.js'

describe('Wilson 95 % interval', () => {
  it.each([
    [0, 0, null],
    [10, 10, { low: 0.7225, high: 1 }],
    [5, 10, { low: 0.2366, high: 0.7634 }],
    [0, 10, { low: 0, high: 0.2775 }],
    [1, 1, { low: 0.2065, high: 1 }],
    [50, 100, { low: 0.4038, high: 0.5962 }],
  ])('%i of %i', (successes, n, expected) => {
    expect(wilson(successes, n)).toEqual(expected)
  })
})

describe('suggested weight', () => {
  it.each([
    [29, 0, null], // under 30 labelled events
    [0, 29, null],
    [30, 0, 100], // log2(60.5) * 20 = 118 -> clamped
    [15, 15, 0], // even odds
    [0, 30, 0], // clamped at 0
    [24, 6, 38], // 20 * log2(24.5 / 6.5) = 38.3
    [27, 3, 59], // 20 * log2(27.5 / 3.5) = 59.48
    [28, 2, 70], // 20 * log2(28.5 / 2.5) = 70.2: the default block threshold
    [20, 10, 19], // 20 * log2(20.5 / 10.5) = 19.3
  ])('fraud %i legit %i -> %s', (fraud, legit, expected) => {
    expect(suggestedWeight(fraud, legit)).toBe(expected)
  })
})

describe('one row of the report', () => {
  it.each([
    [
      { reason: 'a', fired: 3, fraud: 0, legit: 0 },
      0,
      { precision: null, precision_low: null, precision_high: null, recall: null, suggested_weight: null },
    ],
    [
      { reason: 'a', fired: 3, fraud: 0, legit: 0 },
      4,
      { precision: null, precision_low: null, precision_high: null, recall: 0, suggested_weight: null },
    ],
    [
      { reason: 'a', fired: 12, fraud: 5, legit: 5 },
      20,
      { precision: 0.5, precision_low: 0.2366, precision_high: 0.7634, recall: 0.25, suggested_weight: null },
    ],
    [
      { reason: 'a', fired: 40, fraud: 24, legit: 6 },
      30,
      { precision: 0.8, precision_low: 0.6269, precision_high: 0.9049, recall: 0.8, suggested_weight: 38 },
    ],
  ])('%o with %i labelled fraud in the window', (counts, fraudTotal, expected) => {
    expect(ruleFigures(counts, fraudTotal)).toEqual({ ...counts, ...expected })
  })
})
