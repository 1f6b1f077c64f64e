import { performance } from 'node:perf_hooks'
import { NO_SIGNALS, type Signals } from '../observability/signals.js'
import type { AiConfig } from './config.js'
import { cacheKey, type Facts, factsToPrompt, SYSTEM_PROMPT, toFacts } from './facts.js'
import { FailureLog } from './failures.js'
import { Lru } from './lru.js'
import { callProvider, ProviderFailure, type ProviderTarget } from './providers.js'
import { sanitizeExplanation } from './sanitize.js'
import type { Explainer, ExplainerOptions, ExplainerStatus, Explanation, ExplanationInput } from './types.js'

type Outcome = { ok: true; text: string } | { ok: false; reason: string }

/** Provider calls in flight at once; beyond this a request gets the template rather than a queue slot. */
const MAX_IN_FLIGHT = 32
/** Distinct patterns one batch asks about concurrently. */
const BATCH_CONCURRENCY = 8
/** Not worth starting a provider call with less time than this left in a batch. */
const MIN_CALL_MS = 25

export const WARNING_PREFIX = 'ai_explanation_unavailable'

const template = (input: ExplanationInput): Explanation => ({ text: input.fallback, source: 'template' })
const unavailable = (input: ExplanationInput, reason: string): Explanation => ({
  text: input.fallback,
  source: 'template',
  warning: `${WARNING_PREFIX}: ${reason}`,
})

/** Bounds a provider call: the abort ends the HTTP exchange, the timer settles even if fetch ignores it. */
function withDeadline(ms: number, work: (signal: AbortSignal) => Promise<string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const ac = new AbortController()
    const timer = setTimeout(() => {
      reject(new ProviderFailure('timeout'))
      ac.abort()
    }, ms)
    work(ac.signal).then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}

class AiExplainer implements Explainer {
  readonly #config: AiConfig
  readonly #target: ProviderTarget | null
  readonly #fetch: typeof fetch
  readonly #cache: Lru<string>
  readonly #inFlight = new Map<string, Promise<Outcome>>()
  readonly #failures: FailureLog
  readonly #signals: Signals

  constructor(config: AiConfig, opts: ExplainerOptions) {
    this.#config = config
    const { provider, apiKey, baseUrl, model } = config
    this.#target = provider && apiKey && baseUrl && model ? { provider, apiKey, baseUrl, model } : null
    this.#fetch = opts.fetch ?? globalThis.fetch
    this.#cache = new Lru(config.cacheSize)
    this.#failures = new FailureLog(opts.now ?? Date.now)
    this.#signals = opts.signals ?? NO_SIGNALS
  }

  async explain(input: ExplanationInput): Promise<Explanation> {
    if (!this.#target) return template(input)
    const prepared = this.#prepare(input)
    if (!prepared) return unavailable(input, 'bad_input')
    const cached = this.#cache.get(prepared.key)
    if (cached !== undefined) {
      this.#signals.aiCall('cache_hit')
      return { text: cached, source: 'cache' }
    }
    return this.#toExplanation(input, await this.#ask(prepared.key, prepared.facts, this.#config.deadlineMs))
  }

  async explainMany(inputs: ExplanationInput[]): Promise<Explanation[]> {
    if (!this.#target) return inputs.map(template)
    const start = performance.now()
    const prepared = inputs.map((input) => this.#prepare(input))
    const outcomes = new Map<string, Outcome>()
    const queue: { key: string; facts: Facts }[] = []
    const seen = new Set<string>()
    for (const p of prepared) {
      if (!p || seen.has(p.key)) continue
      seen.add(p.key)
      const cached = this.#cache.get(p.key)
      if (cached === undefined) queue.push(p)
      else {
        this.#signals.aiCall('cache_hit')
        outcomes.set(p.key, { ok: true, text: cached })
      }
    }
    const cachedKeys = new Set(outcomes.keys())
    // Every call gets only what is left of the one batch deadline, so the batch never waits longer.
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const left = this.#config.deadlineMs - (performance.now() - start)
        if (left < MIN_CALL_MS) return
        outcomes.set(next.key, await this.#ask(next.key, next.facts, left))
      }
    }
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, queue.length) }, worker))
    return inputs.map((input, i) => {
      const p = prepared[i]
      if (!p) return unavailable(input, 'bad_input')
      const outcome = outcomes.get(p.key)
      if (!outcome) return unavailable(input, 'deadline')
      if (outcome.ok && cachedKeys.has(p.key)) return { text: outcome.text, source: 'cache' }
      return this.#toExplanation(input, outcome)
    })
  }

  status(): ExplainerStatus {
    const last = this.#failures.last()
    return {
      configured: this.#target !== null,
      provider: this.#target?.provider ?? null,
      model: this.#target?.model ?? null,
      deadlineMs: this.#config.deadlineMs,
      cacheEntries: this.#cache.size,
      cacheSize: this.#cache.capacity,
      recentFailures: this.#failures.recent(),
      lastFailure: last?.reason ?? null,
      lastFailureAtMs: last?.atMs ?? null,
      backingOff: this.#failures.backingOff(),
    }
  }

  /** Malformed input from a caller bug must not throw out of scoring; it just gets the template. */
  #prepare(input: ExplanationInput): { key: string; facts: Facts } | null {
    try {
      const facts = toFacts(input)
      return { key: cacheKey(facts), facts }
    } catch {
      return null
    }
  }

  #toExplanation(input: ExplanationInput, outcome: Outcome): Explanation {
    return outcome.ok ? { text: outcome.text, source: 'ai' } : unavailable(input, outcome.reason)
  }

  /** One provider call per key at a time: concurrent identical misses share the call in flight. */
  #ask(key: string, facts: Facts, timeoutMs: number): Promise<Outcome> {
    const shared = this.#inFlight.get(key)
    if (shared) return shared
    if (this.#failures.backingOff()) return Promise.resolve({ ok: false, reason: 'provider_backoff' })
    if (this.#inFlight.size >= MAX_IN_FLIGHT) return Promise.resolve({ ok: false, reason: 'busy' })
    const call = this.#call(facts, timeoutMs).then((outcome) => {
      if (outcome.ok) {
        this.#cache.set(key, outcome.text)
        this.#failures.success()
      } else {
        this.#failures.record(outcome.reason)
      }
      this.#inFlight.delete(key)
      return outcome
    })
    this.#inFlight.set(key, call)
    return call
  }

  async #call(facts: Facts, timeoutMs: number): Promise<Outcome> {
    const outcome = await this.#signals.span('ai.explain', () => this.#provider(facts, timeoutMs))
    this.#signals.aiCall(outcome.ok ? 'ok' : outcome.reason === 'timeout' ? 'timeout' : 'error')
    return outcome
  }

  async #provider(facts: Facts, timeoutMs: number): Promise<Outcome> {
    const target = this.#target!
    try {
      const prompt = { system: SYSTEM_PROMPT, user: factsToPrompt(facts) }
      const raw = await withDeadline(timeoutMs, (signal) => callProvider(target, prompt, this.#fetch, signal))
      return sanitizeExplanation(raw)
    } catch (err) {
      return { ok: false, reason: err instanceof ProviderFailure ? err.reason : 'internal_error' }
    }
  }
}

/** The explanation layer for the configured provider (`settings.ai`, see docs/ai-explanations.md). */
export function createExplainer(config: AiConfig, opts: ExplainerOptions = {}): Explainer {
  return new AiExplainer(config, opts)
}
