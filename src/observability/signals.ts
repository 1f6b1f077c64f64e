/**
 * What the domain reports to the operator's metrics and traces. Services, the group writer, the
 * overload guard, the limiter, the AI explainer and the jobs call these verbs; only
 * observability/metrics.ts and observability/tracing.ts know prom-client and OpenTelemetry. Every
 * argument is a bounded word (a verdict, a reason code, a job name), never personal data or a key.
 */
export interface Signals {
  /** A score was returned (`tenant`: the tenant id, kept only when per-tenant labels are on). */
  scored(verdict: string, reasons: readonly string[], tenant: string): void
  /** One group commit of the scoring write path: its jobs and how long the transaction took. */
  groupCommitted(size: number, seconds: number, ok: boolean): void
  /** A request refused by load shedding. */
  shed(cause: 'queue' | 'lag'): void
  /** A shared (Redis) rate limit answered from this process's memory because Redis could not. */
  limiterFallback(): void
  /** One AI explanation: from the cache, a provider answer, a timeout or another failure. */
  aiCall(outcome: 'cache_hit' | 'ok' | 'timeout' | 'error'): void
  /** One run of a background job. */
  jobRun(job: string, ok: boolean): void
  /**
   * Runs `fn` inside a span named `name` when tracing is on (a child of the current span); otherwise
   * just calls it.
   */
  span<T>(name: string, fn: () => Promise<T>): Promise<T>
}

const nothing = () => {}

/** Reports nothing: the default of every component built without an operator (tests, the CLI). */
export const NO_SIGNALS: Signals = {
  scored: nothing,
  groupCommitted: nothing,
  shed: nothing,
  limiterFallback: nothing,
  aiCall: nothing,
  jobRun: nothing,
  span: (_name, fn) => fn(),
}
