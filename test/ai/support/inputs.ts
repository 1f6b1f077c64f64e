import type { ExplainCheck, ExplanationInput } from '../../../src/ai/index.js'

export function check(
  reason: string,
  weight: number,
  evidence: ExplainCheck['evidence'] = {},
  message?: string,
) {
  return { check: 'test', key: reason, weight, reason, message: message ?? `Rule ${reason} fired.`, evidence }
}

export function explanationInput(over: Partial<ExplanationInput> = {}): ExplanationInput {
  const checks = over.checks ?? [check('datacenter_ip', 45, { tor: false }), check('disposable_email', 35)]
  const score =
    over.score ??
    Math.min(
      100,
      checks.reduce((s, c) => s + c.weight, 0),
    )
  return {
    verdict: score >= 70 ? 'block' : score >= 40 ? 'review' : 'allow',
    score,
    thresholds: { review: 40, block: 70 },
    checks,
    fallback: `Templated explanation for score ${score}.`,
    ...over,
  }
}

/** Three distinct patterns; variants within a pattern differ only inside the same evidence buckets. */
export function patternInput(pattern: number, variant: number): ExplanationInput {
  switch (pattern % 3) {
    case 0:
      return explanationInput({ checks: [check('ip_velocity', 25, { accounts: 5 + (variant % 5) })] })
    case 1:
      return explanationInput({ checks: [check('headless_browser', 45), check('vpn_ip', 30)], score: 75 })
    default:
      return explanationInput({
        checks: [check('gibberish_email', 20, { gibberish_score: 0.81 + (variant % 9) / 100 })],
      })
  }
}

export const AI_TEXT =
  'This sign-up was blocked because it came from a hosting network rather than a home connection. The email address also belongs to a throwaway mail service.'
