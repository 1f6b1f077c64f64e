import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import { ApiError } from '../../errors.js'
import { NO_SIGNALS, type Signals } from '../../observability/signals.js'

/** What the overload guard reads: how many scoring jobs wait for a commit. */
export interface QueueDepth {
  readonly depth: number
}

export interface OverloadLimits {
  /** Scoring jobs waiting for the group commit before new work is refused (VERDICT_MAX_QUEUE). */
  maxQueue: number
  /** Event-loop delay, sustained over two half-second windows, before new work is refused (VERDICT_MAX_LAG_MS). */
  maxLagMs: number
}

const SAMPLE_MS = 500

/**
 * Load shedding: past either bound a request is refused at once with 503 and Retry-After instead of
 * joining a queue that only grows (memory, then latency for everyone). A refused request did nothing,
 * so the caller's retry is safe. The delay is measured by Node's own histogram (no timer of ours on
 * the hot path); the figure used is the lower of the worst delays of the last two half seconds, so
 * only a loop that stays behind counts, not one long synchronous step.
 */
export class OverloadGuard {
  private readonly histogram: IntervalHistogram
  private readonly timer: NodeJS.Timeout
  private lagMs = 0

  constructor(
    private readonly queue: QueueDepth,
    private readonly limits: OverloadLimits,
    private readonly signals: Signals = NO_SIGNALS,
  ) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 })
    this.histogram.enable()
    let previous = 0
    this.timer = setInterval(() => {
      const worst = this.histogram.max / 1e6
      this.histogram.reset()
      // Sustained only: one long block (start-up, a large batch, a GC pause) is not overload.
      this.lagMs = Math.min(previous, worst)
      previous = worst
    }, SAMPLE_MS)
    this.timer.unref()
  }

  /** Throws the 503 when the process is past a bound. */
  check(): void {
    const depth = this.queue.depth
    if (depth >= this.limits.maxQueue) {
      this.signals.shed('queue')
      throw overloaded(`${depth} scoring jobs are waiting for storage (limit ${this.limits.maxQueue})`)
    }
    if (this.lagMs > this.limits.maxLagMs) {
      this.signals.shed('lag')
      throw overloaded(
        `the server is behind by ${Math.round(this.lagMs)} ms (limit ${this.limits.maxLagMs} ms)`,
      )
    }
  }

  /** Whether a request arriving now would be refused (readiness), without counting a refusal. */
  shedding(): boolean {
    return this.queue.depth >= this.limits.maxQueue || this.lagMs > this.limits.maxLagMs
  }

  /** Figures for health. */
  status(): { queue: number; lagMs: number } {
    return { queue: this.queue.depth, lagMs: Math.round(this.lagMs) }
  }

  close(): void {
    clearInterval(this.timer)
    this.histogram.disable()
  }
}

const overloaded = (why: string) =>
  new ApiError('unavailable', `overloaded, retry shortly: ${why}`, { 'Retry-After': '1' })
