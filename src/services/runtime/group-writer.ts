import { performance } from 'node:perf_hooks'
import { ApiError } from '../../errors.js'
import { NO_SIGNALS, type Signals } from '../../observability/signals.js'
import { QUOTA_OVERTAKEN, type UsageStore } from '../../store/access/usage.js'
import { blind, type Db, together, type Work } from '../../store/engine/db.js'
import { lockEntities } from '../../store/engine/entity-locks.js'
import { overlapped } from '../../store/engine/overlap.js'
import { GroupCounters } from '../../store/events/aggregates.js'
import { GroupMeter, MeterOvertaken } from '../../store/events/group-meter.js'

/**
 * A scoring job: a unit of work that may add to the group's counters once it has succeeded, and meters
 * its units through the group's meter (refusing, before it writes anything, when they do not fit).
 */
export type Job<T> = (counters: GroupCounters, meter: GroupMeter) => Work<T>

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

interface Pending {
  job: Job<unknown>
  /** Entities whose history the job reads and extends (see store/engine/entity-locks.ts). */
  locks: readonly string[]
  /** What the job reads and writes, by entity, or null: see `submit`. */
  keys: readonly string[] | null
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

/**
 * A job's outcome. A refusal (quota, a taken idempotency key) happens before the job writes anything: the
 * others go on. Anything else may have left half a job behind, so it fails the whole group.
 */
function* settle(work: Work<unknown>): Work<Outcome> {
  try {
    return { ok: true, value: yield* work }
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return { ok: false, error }
  }
}

/**
 * Groups that may be in flight at once on PostgreSQL (each on its own pooled connection), and how long
 * the running ones must all have been open before another starts beside them. One group keeps the
 * database and this process both busy on its own (its jobs' statements are pipelined,
 * store/engine/pg-session.ts), and groups of the same traffic cost less CPU when they are fewer and
 * larger: at saturation on the bench mix, 1,320 and 1,332 µs per event with one group at a time against
 * 1,662 and 1,595 µs with three (docs/storage.md). A further group is for a group that waits, on another
 * node's entity lock or a row it holds: after `GROUP_STALL_MS` (longer than a group takes at saturation,
 * about 30 ms there) the jobs queued behind it that it does not hold go ahead in a group of their own.
 */
export const PG_PARALLEL_GROUPS = 3
export const GROUP_STALL_MS = 50

/**
 * Group commit for the scoring write path: jobs submitted in the same tick run one after another in a
 * single transaction. Every job sees the rows of the jobs before it (velocity history stays exact), the
 * counters of the whole group are written once at its end, and concurrent requests share one commit
 * instead of paying for one each. A job may refuse (an ApiError, e.g. over quota) only before it writes
 * anything, so a refused job leaves nothing behind and needs no savepoint (which on PostgreSQL would cost
 * two round trips per event); any other error rolls the whole group back and fails all of its jobs.
 * The monthly meter is written last (store/events/group-meter.ts): when another node used the quota room
 * meanwhile, the group is rolled back and run once more with the usage rows locked up front.
 * On SQLite the whole group runs synchronously: nothing else runs on the event loop meanwhile, and one
 * group runs at a time. On PostgreSQL up to `parallel` groups run at once, never two that share an
 * entity (see `take`): a job waits while a running group holds one of its entities, and so does every
 * later job of that entity, so each entity's jobs still commit in the order they were submitted.
 */
export class GroupWriter {
  private queue: Pending[] = []
  private running = 0
  /** When each running group started (performance.now()). */
  private readonly started = new Set<{ at: number }>()
  private pumping = false
  /** A pump scheduled for when the running groups will have stalled. */
  private stallTimer: NodeJS.Timeout | null = null
  /** Entities of the running groups (no two running groups share one, see `take`). */
  private readonly held = new Set<string>()

  constructor(
    private readonly db: Db,
    private readonly usage: UsageStore,
    private readonly maxGroup = 256,
    private readonly parallel = db.dialect === 'postgres' ? PG_PARALLEL_GROUPS : 1,
    private readonly signals: Signals = NO_SIGNALS,
    private readonly stallMs = GROUP_STALL_MS,
  ) {}

  /** Jobs waiting for the next commit: the load-shedding signal. */
  get depth(): number {
    return this.queue.length
  }

  /**
   * Queues a job for the next group. `keys` name what it reads and writes, by entity: a job runs beside
   * the running jobs of its group when their keys are disjoint (store/engine/overlap.ts); null, alone.
   */
  submit<T>(job: Job<T>, locks: readonly string[] = [], keys: readonly string[] | null = null): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, locks, keys, resolve: resolve as (v: unknown) => void, reject })
      if (!this.pumping && this.running < this.parallel) {
        // Jobs submitted in the same tick join one group.
        this.pumping = true
        setImmediate(() => {
          this.pumping = false
          this.pump()
        })
      }
    })
  }

  /** Starts groups while there is room, the running ones have stalled, and a queued job may run. */
  private pump(): void {
    while (this.running < this.parallel && this.queue.length > 0) {
      const wait = this.untilStalled()
      if (wait > 0) {
        if (this.stallTimer === null) {
          this.stallTimer = setTimeout(() => {
            this.stallTimer = null
            this.pump()
          }, wait)
          this.stallTimer.unref()
        }
        return
      }
      const group = this.take()
      if (group.length === 0) return
      const keys = [...new Set(group.flatMap((item) => item.locks))]
      for (const k of keys) this.held.add(k)
      this.running++
      const started = { at: performance.now() }
      this.started.add(started)
      void this.commit(group).finally(() => {
        for (const k of keys) this.held.delete(k)
        this.started.delete(started)
        this.running--
        this.pump()
      })
    }
  }

  /** Milliseconds until every running group has been open `stallMs` (0: now, or none runs). */
  private untilStalled(): number {
    if (this.running === 0) return 0
    let youngest = 0
    for (const g of this.started) youngest = Math.max(youngest, g.at)
    return Math.max(0, Math.ceil(youngest + this.stallMs - performance.now()))
  }

  /**
   * The next group: queued jobs in order, up to maxGroup, skipping a job that shares an entity with a
   * running group or with a job skipped before it (so an entity's jobs never overtake each other).
   */
  private take(): Pending[] {
    if (this.held.size === 0 && this.queue.length <= this.maxGroup) {
      const all = this.queue
      this.queue = []
      return all
    }
    const group: Pending[] = []
    const rest: Pending[] = []
    const blocked = new Set<string>()
    for (const item of this.queue) {
      const free =
        group.length < this.maxGroup && item.locks.every((k) => !this.held.has(k) && !blocked.has(k))
      if (free) group.push(item)
      else {
        rest.push(item)
        for (const k of item.locks) blocked.add(k)
      }
    }
    this.queue = rest
    return group
  }

  /** Runs one group and settles its jobs' promises. */
  private async commit(group: readonly Pending[]): Promise<void> {
    const outcomes: Outcome[] = []
    const started = performance.now()
    try {
      await this.signals.span('group.commit', async () => {
        try {
          await this.run(group, outcomes, null)
        } catch (error) {
          // Rare (only near a quota, with another writer metering the same tenant): run it again exactly.
          if (!(error instanceof MeterOvertaken)) throw error
          await this.run(group, outcomes, error.keys)
        }
      })
    } catch (error) {
      // The commit itself failed: nothing of the group was written.
      this.signals.groupCommitted(group.length, (performance.now() - started) / 1000, false)
      for (const item of group) item.reject(error)
      return
    }
    this.signals.groupCommitted(group.length, (performance.now() - started) / 1000, true)
    group.forEach((item, i) => {
      const o = outcomes[i]!
      if (o.ok) item.resolve(o.value)
      else item.reject(o.error)
    })
  }

  /**
   * One transaction for the group; `exact` names the usage rows to lock first (the retry). Throws
   * MeterOvertaken when the meter's final write found the room taken, refused here or on the server.
   */
  private async run(
    group: readonly Pending[],
    outcomes: Outcome[],
    exact: readonly (readonly [string, string])[] | null,
  ): Promise<void> {
    const dialect = this.db.dialect
    const locks = group.flatMap((item) => item.locks)
    // On PostgreSQL the group's end is not read back: it goes out with COMMIT, and an overtaken quota
    // fails it on the server (QUOTA_OVERTAKEN) instead of returning a refusal.
    const meter = new GroupMeter(this.usage, exact !== null, dialect === 'postgres')
    try {
      await this.db.tx(function* () {
        outcomes.length = 0
        yield* lockEntities(dialect, locks)
        if (exact) yield* meter.lock(exact)
        const counters = new GroupCounters()
        // In order; a job that shares no entity with the running ones runs beside them (on PostgreSQL).
        outcomes.push(
          ...(yield* overlapped(
            group,
            (item) => item.keys,
            (item) => settle(item.job(counters, meter)),
          )),
        )
        // One batch whose statements run, and lock rows, in their order: usage rows before counter rows, in
        // every group and mode, so transactions lock them in one order.
        const end = together(meter.flush(), counters.flush())
        yield* dialect === 'postgres' ? blind(end) : end
      })
    } catch (error) {
      if ((error as { code?: string }).code === QUOTA_OVERTAKEN) throw new MeterOvertaken(meter.keys())
      throw error
    }
    meter.committed()
  }
}
