import { NO_SIGNALS, type Signals } from '../observability/signals.js'
import { localLease } from './lease.js'
import type { Job, JobContext, JobLease } from './types.js'

/**
 * How long a `cluster` job's lease is asked for without a heartbeat: two intervals, renewed at every run,
 * so a live holder keeps it and another process takes over within two intervals of the holder's death.
 */
export const leaseTtlMs = (job: Job): number => 2 * job.intervalMs

export interface SchedulerOptions {
  lease?: JobLease
  /**
   * With a shared lease: a fixed lease lifetime, renewed by a heartbeat every third of it, so that another
   * process takes a dead holder's jobs over within this time however long the jobs' intervals are.
   */
  leaseTtlMs?: number
  /** Where runs and failures are counted (metrics). */
  signals?: Signals
}

interface JobState {
  job: Job
  timers: NodeJS.Timeout[]
  /** The run in progress, if any: a job never runs twice at once in one process. */
  running: Promise<boolean> | null
  /** Whether this process holds the job's lease (released on stop). */
  held: boolean
}

/**
 * Runs the background jobs on timers that never keep the process alive. A failed run is logged and the
 * job runs again at its next interval; a tick that finds the previous run still going is skipped.
 * Only server.ts starts it; tests call `runNow` instead.
 */
export class Scheduler {
  readonly #states = new Map<string, JobState>()
  readonly #ctx: JobContext
  readonly #lease: JobLease
  readonly #ttl: number | undefined
  readonly #signals: Signals
  #heartbeat: NodeJS.Timeout | null = null
  #beating: Promise<void> | null = null
  #started = false
  #stopped = false

  constructor(jobs: readonly Job[], ctx: JobContext, options: SchedulerOptions = {}) {
    for (const job of jobs) {
      if (this.#states.has(job.name)) throw new Error(`two background jobs are named "${job.name}"`)
      this.#states.set(job.name, { job, timers: [], running: null, held: false })
    }
    this.#ctx = ctx
    this.#lease = options.lease ?? localLease
    this.#ttl = options.leaseTtlMs
    this.#signals = options.signals ?? NO_SIGNALS
  }

  /** The `cluster` jobs this process holds the lease of (health shows them). */
  get held(): string[] {
    return [...this.#states.values()].filter((s) => s.held).map((s) => s.job.name)
  }

  #ttlOf(job: Job): number {
    return this.#ttl ?? leaseTtlMs(job)
  }

  /** Renews (or takes) the lease of every cluster job that is not running right now. */
  async #beat(): Promise<void> {
    for (const state of this.#states.values()) {
      if (state.job.scope !== 'cluster' || state.running || this.#stopped) continue
      try {
        state.held = await this.#lease.acquire(state.job.name, this.#ttlOf(state.job))
      } catch (err) {
        state.held = false
        this.#ctx.log.warn(
          { job: state.job.name, err },
          `background job ${state.job.name}: lease renewal failed`,
        )
      }
    }
  }

  /** The declared jobs, in declaration order. */
  get jobs(): Job[] {
    return [...this.#states.values()].map((s) => s.job)
  }

  start(): void {
    if (this.#started || this.#stopped) return
    this.#started = true
    if (this.#ttl !== undefined) {
      const beat = () => {
        if (this.#beating) return
        this.#beating = this.#beat().finally(() => {
          this.#beating = null
        })
      }
      beat()
      this.#heartbeat = setInterval(beat, Math.max(100, Math.floor(this.#ttl / 3)))
      this.#heartbeat.unref()
    }
    for (const state of this.#states.values()) {
      const tick = () => {
        this.#run(state).catch((err: unknown) => {
          const message = err instanceof Error ? err.message : String(err)
          this.#ctx.log.warn(
            { job: state.job.name, err },
            `background job ${state.job.name} failed: ${message}`,
          )
        })
      }
      const first = setTimeout(() => {
        if (this.#stopped) return
        tick()
        const every = setInterval(tick, state.job.intervalMs)
        every.unref()
        state.timers.push(every)
      }, state.job.firstRunMs ?? state.job.intervalMs)
      first.unref()
      state.timers.push(first)
    }
  }

  /**
   * Runs `name` once now, after the run in progress if there is one. Resolves true when it ran, false
   * when another process holds its lease; rejects with the job's own error (nothing is logged).
   */
  async runNow(name: string): Promise<boolean> {
    const state = this.#states.get(name)
    if (!state) throw new Error(`no background job is named "${name}"`)
    while (state.running) await state.running.catch(() => {})
    return this.#run(state)
  }

  /** No further runs; resolves once the runs in progress have finished and held leases are released. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#heartbeat) clearInterval(this.#heartbeat)
    await this.#beating
    for (const state of this.#states.values()) {
      for (const t of state.timers) clearTimeout(t)
      state.timers = []
    }
    const states = [...this.#states.values()]
    await Promise.all(states.map((s) => s.running?.catch(() => {})))
    await Promise.all(
      states
        .filter((s) => s.held)
        .map(async (s) => {
          s.held = false
          await this.#lease.release(s.job.name).catch((err: unknown) => {
            this.#ctx.log.warn({ job: s.job.name, err }, `background job ${s.job.name}: lease release failed`)
          })
        }),
    )
  }

  /** One run unless one is already going (a timer tick then does nothing). */
  #run(state: JobState): Promise<boolean> {
    if (state.running) return Promise.resolve(false)
    const run = (async () => {
      const { job } = state
      if (job.scope === 'cluster') {
        state.held = await this.#lease.acquire(job.name, this.#ttlOf(job))
        if (!state.held) return false
      }
      try {
        await job.run(this.#ctx)
      } catch (err) {
        this.#signals.jobRun(job.name, false)
        throw err
      }
      this.#signals.jobRun(job.name, true)
      return true
    })()
    state.running = run
    const clear = () => {
      if (state.running === run) state.running = null
    }
    run.then(clear, clear)
    return run
  }
}
