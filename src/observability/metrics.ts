import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { isReasonCode } from '../scoring/reasons.js'
import { NO_SIGNALS, type Signals } from './signals.js'

/** What the scrape-time gauges read from the running app (set once the app is built). */
export interface MetricsSources {
  /** Scoring jobs waiting for the group commit. */
  queueDepth(): number
  /** The overload guard's sustained event-loop delay, in ms. */
  lagMs(): number
  dbStats(): { pool?: { total: number; idle: number; waiting: number }; busyRetries?: number } | undefined
  /** Redis as the limiter sees it. */
  redis(): 'ok' | 'unreachable' | 'not_configured'
  /** Reference data with its date (feeds and packages). */
  sources(): readonly { name: string; kind: string; dataDate: string | null }[]
  now(): number
  /** The webhook outbox across tenants (docs/webhooks.md), read from the database at scrape time. */
  webhooks?(): Promise<{
    delivered: number
    failed: number
    retrying: number
    oldestUndeliveredSeconds: number
  }>
}

export interface MetricsOptions {
  /** Adds a `tenant` label (the tenant id) to the score and reason counters (VERDICT_METRICS_TENANT_LABELS). */
  tenantLabels?: boolean
  /** Spans, when tracing is on (observability/tracing.ts). */
  span?: Signals['span']
}

/** Request durations from 1 ms to 10 s: scoring answers in milliseconds, a slow MX lookup takes seconds. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const GROUP_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]

/**
 * The Prometheus metrics of one process, in a registry of its own (several apps in one test process
 * never share series). Labels carry only bounded words: a route pattern (never the URL), a method, a
 * status, a verdict, a built-in reason code (any other code counts as `custom`), a job name, a source
 * name, and the tenant id only when per-tenant labels are on. Nothing personal, no key.
 */
export class Metrics implements Signals {
  readonly registry = new Registry()
  private sources: MetricsSources | null = null
  private readonly tenantLabels: boolean
  private readonly requests: Counter<'method' | 'route' | 'status'>
  private readonly duration: Histogram<'method' | 'route'>
  private readonly scores: Counter<string>
  private readonly reasons: Counter<string>
  private readonly groupSize: Histogram<'outcome'>
  private readonly groupSeconds: Histogram<'outcome'>
  private readonly shedTotal: Counter<'cause'>
  private readonly fallbacks: Counter
  private readonly ai: Counter<'outcome'>
  private readonly jobs: Counter<'job' | 'outcome'>
  readonly span: Signals['span']

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry]
    this.tenantLabels = options.tenantLabels ?? false
    this.span = options.span ?? NO_SIGNALS.span
    collectDefaultMetrics({ register: this.registry })
    const tenant = this.tenantLabels ? ['tenant'] : []
    this.requests = new Counter({
      name: 'verdict_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    })
    this.duration = new Histogram({
      name: 'verdict_http_request_duration_seconds',
      help: 'Time from the request to its answer, by route pattern and method',
      labelNames: ['method', 'route'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.scores = new Counter({
      name: 'verdict_scores_total',
      help: 'Events scored, by verdict',
      labelNames: ['verdict', ...tenant],
      registers,
    })
    this.reasons = new Counter({
      name: 'verdict_reasons_total',
      help: 'Reason codes fired in scored events (codes outside the built-in list count as custom)',
      labelNames: ['code', ...tenant],
      registers,
    })
    this.groupSize = new Histogram({
      name: 'verdict_group_commit_size',
      help: 'Scoring jobs per group commit',
      labelNames: ['outcome'],
      buckets: GROUP_SIZE_BUCKETS,
      registers,
    })
    this.groupSeconds = new Histogram({
      name: 'verdict_group_commit_duration_seconds',
      help: 'Duration of one group commit transaction',
      labelNames: ['outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.shedTotal = new Counter({
      name: 'verdict_load_shed_total',
      help: 'Requests refused with 503 by load shedding, by cause (queue or lag)',
      labelNames: ['cause'],
      registers,
    })
    this.fallbacks = new Counter({
      name: 'verdict_limiter_fallbacks_total',
      help: 'Rate-limit decisions taken in process memory because Redis did not answer',
      registers,
    })
    this.ai = new Counter({
      name: 'verdict_ai_explanations_total',
      help: 'AI explanations by outcome: cache_hit, ok (provider answered), timeout, error',
      labelNames: ['outcome'],
      registers,
    })
    this.jobs = new Counter({
      name: 'verdict_job_runs_total',
      help: 'Background job runs, by job and outcome (ok or failed)',
      labelNames: ['job', 'outcome'],
      registers,
    })
    this.gauges(registers)
  }

  /** The gauges read at scrape time from the running app (zero until `attach`). */
  private gauges(registers: Registry[]): void {
    const self = this
    new Gauge({
      name: 'verdict_scoring_queue_depth',
      help: 'Scoring jobs waiting for the group commit',
      registers,
      collect() {
        this.set(self.sources?.queueDepth() ?? 0)
      },
    })
    new Gauge({
      name: 'verdict_event_loop_lag_seconds',
      help: 'Sustained event-loop delay as the load shedder sees it',
      registers,
      collect() {
        this.set((self.sources?.lagMs() ?? 0) / 1000)
      },
    })
    new Gauge({
      name: 'verdict_db_pool_connections',
      help: 'PostgreSQL pool connections by state (in_use, idle) and callers waiting for one',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = self.sources?.dbStats()?.pool
        if (!pool) return
        this.set({ state: 'in_use' }, pool.total - pool.idle)
        this.set({ state: 'idle' }, pool.idle)
        this.set({ state: 'waiting' }, pool.waiting)
      },
    })
    new Counter({
      name: 'verdict_sqlite_busy_retries_total',
      help: "SQLite transactions that found another process's write lock and tried again",
      registers,
      collect() {
        const retries = self.sources?.dbStats()?.busyRetries
        if (retries === undefined) return
        this.reset()
        this.inc(retries)
      },
    })
    new Gauge({
      name: 'verdict_redis_up',
      help: 'Redis shared by the nodes: 1 answering, 0 unreachable (absent when not configured)',
      registers,
      collect() {
        const state = self.sources?.redis()
        if (state === undefined || state === 'not_configured') return
        this.set(state === 'ok' ? 1 : 0)
      },
    })
    new Gauge({
      name: 'verdict_webhook_deliveries',
      help: 'Webhook deliveries kept (30 days) by state: delivered, failed, retrying',
      labelNames: ['state'],
      registers,
      async collect() {
        const w = await self.sources?.webhooks?.().catch(() => undefined)
        if (!w) return
        this.set({ state: 'delivered' }, w.delivered)
        this.set({ state: 'failed' }, w.failed)
        this.set({ state: 'retrying' }, w.retrying)
      },
    })
    new Gauge({
      name: 'verdict_webhook_oldest_undelivered_seconds',
      help: 'Age of the oldest webhook message not yet delivered (0 when none waits)',
      registers,
      async collect() {
        const w = await self.sources?.webhooks?.().catch(() => undefined)
        if (w) this.set(w.oldestUndeliveredSeconds)
      },
    })
    new Gauge({
      name: 'verdict_reference_data_age_seconds',
      help: 'Age of each dated reference source (feeds, packaged databases)',
      labelNames: ['source'],
      registers,
      collect() {
        this.reset()
        const sources = self.sources
        if (!sources) return
        const now = sources.now()
        for (const s of sources.sources()) {
          const at = s.dataDate ? Date.parse(s.dataDate) : Number.NaN
          if (Number.isFinite(at)) this.set({ source: s.name }, Math.max(0, (now - at) / 1000))
        }
      },
    })
  }

  /** Points the scrape-time gauges at the running app. */
  attach(sources: MetricsSources): void {
    this.sources = sources
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) })
    this.duration.observe({ method, route }, seconds)
  }

  scored(verdict: string, reasons: readonly string[], tenant: string): void {
    if (this.tenantLabels) {
      this.scores.inc({ verdict, tenant })
      for (const code of reasons) this.reasons.inc({ code: reasonLabel(code), tenant })
    } else {
      this.scores.inc({ verdict })
      for (const code of reasons) this.reasons.inc({ code: reasonLabel(code) })
    }
  }

  groupCommitted(size: number, seconds: number, ok: boolean): void {
    const outcome = ok ? 'ok' : 'failed'
    this.groupSize.observe({ outcome }, size)
    this.groupSeconds.observe({ outcome }, seconds)
  }

  shed(cause: 'queue' | 'lag'): void {
    this.shedTotal.inc({ cause })
  }

  limiterFallback(): void {
    this.fallbacks.inc()
  }

  aiCall(outcome: 'cache_hit' | 'ok' | 'timeout' | 'error'): void {
    this.ai.inc({ outcome })
  }

  jobRun(job: string, ok: boolean): void {
    this.jobs.inc({ job, outcome: ok ? 'ok' : 'failed' })
  }

  /** The exposition text and its content type. */
  async expose(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType }
  }
}

/** Built-in codes are a closed list; anything else (a tenant's own rule code) is one `custom` series. */
const reasonLabel = (code: string) => (isReasonCode(code) ? code : 'custom')
