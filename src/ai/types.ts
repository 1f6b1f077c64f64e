import type { Signals } from '../observability/signals.js'
import type { Check, Verdict } from '../scoring/types.js'

/**
 * One fired check as the score engine produces it. The names stay open strings here: this layer treats
 * any code it does not know as foreign (a generic description, never echoed unless it has our shape).
 */
export type ExplainCheck = Omit<Check, 'check' | 'reason'> & { check: string; reason: string }

export interface ExplanationInput {
  verdict: Verdict
  score: number
  thresholds: { review: number; block: number }
  checks: ExplainCheck[]
  /** The templated explanation; returned whenever the AI cannot answer. */
  fallback: string
}

export interface Explanation {
  text: string
  /** `ai`: a provider answered this call (also when the call was shared with identical concurrent inputs). */
  source: 'ai' | 'cache' | 'template'
  /** `ai_explanation_unavailable: <reason>` when a configured provider could not be used. */
  warning?: string
}

export type ProviderName = 'openai' | 'anthropic'

export interface ExplainerStatus {
  configured: boolean
  provider: ProviderName | null
  model: string | null
  deadlineMs: number
  cacheEntries: number
  /** Capacity of the explanation cache. */
  cacheSize: number
  /** Provider failures in the last 10 minutes. */
  recentFailures: number
  /** Our own short reason code of the last failure (never provider text, which may echo a key). */
  lastFailure: string | null
  lastFailureAtMs: number | null
  /** True while the provider is skipped after repeated consecutive failures. */
  backingOff: boolean
}

export interface Explainer {
  explain(input: ExplanationInput): Promise<Explanation>
  /** Explains many inputs under ONE overall deadline (batch scoring); inputs with the same cache key share one provider call. */
  explainMany(inputs: ExplanationInput[]): Promise<Explanation[]>
  status(): ExplainerStatus
}

export interface ExplainerOptions {
  /** Clock for failure windows and back-off; defaults to Date.now. */
  now?: () => number
  fetch?: typeof fetch
  /** Where calls, cache hits and timeouts are counted and the call traced. */
  signals?: Signals
}
