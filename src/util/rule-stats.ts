/**
 * Pure statistics of the per-rule performance report (docs/outcomes.md): the Wilson score interval
 * of a precision and the weight a rule's labels suggest.
 */

/** The two-sided 95 % normal quantile. */
const Z95 = 1.959963984540054

/** Labelled events a reason code needs before a weight is suggested for it. */
export const MIN_LABELLED_FOR_WEIGHT = 30

/** Points of weight per doubling of the odds of fraud (odds 1:1 gives 0, 11.3:1 the default block 70). */
export const WEIGHT_PER_DOUBLING = 20

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

/** 95 % Wilson score interval of `successes` out of `n`; null when n is 0. */
export function wilson(successes: number, n: number): { low: number; high: number } | null {
  if (n <= 0) return null
  const p = successes / n
  const z2 = Z95 * Z95
  const denom = 1 + z2 / n
  const centre = (p + z2 / (2 * n)) / denom
  const half = (Z95 / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  return { low: round4(Math.max(0, centre - half)), high: round4(Math.min(1, centre + half)) }
}

/**
 * The weight (0-100) the labels suggest for a code: 20 points per doubling of the smoothed odds of
 * fraud among the code's labelled events, (fraud + 0.5) / (legit + 0.5), clamped to 0-100. Null under
 * MIN_LABELLED_FOR_WEIGHT labelled events.
 */
export function suggestedWeight(fraud: number, legit: number): number | null {
  if (fraud + legit < MIN_LABELLED_FOR_WEIGHT) return null
  const w = Math.round(WEIGHT_PER_DOUBLING * Math.log2((fraud + 0.5) / (legit + 0.5)))
  return Math.min(100, Math.max(0, w))
}

export interface RuleCounts {
  reason: string
  fired: number
  fraud: number
  legit: number
}

/** One row of the report from its counts and the window's labelled fraud total. */
export function ruleFigures(c: RuleCounts, fraudTotal: number) {
  const labelled = c.fraud + c.legit
  const interval = wilson(c.fraud, labelled)
  return {
    reason: c.reason,
    fired: c.fired,
    fraud: c.fraud,
    legit: c.legit,
    precision: labelled ? round4(c.fraud / labelled) : null,
    precision_low: interval?.low ?? null,
    precision_high: interval?.high ?? null,
    recall: fraudTotal ? round4(c.fraud / fraudTotal) : null,
    suggested_weight: suggestedWeight(c.fraud, c.legit),
  }
}
