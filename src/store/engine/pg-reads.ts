import type { BatchOp, Op, Step, Work } from './db.js'

/** Reads sent together on one connection at most: a bound on one message and one backend's share. */
export const MAX_PARTS = 32

interface Waiting {
  work: Work<unknown>
  step: IteratorResult<Step, unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/** A statement that only reads, and so may go out with other units' reads (and again, alone, on failure). */
const readsOnly = (op: Op): boolean => op.kind !== 'run' && !/^\s*(INSERT|UPDATE|DELETE)\b/i.test(op.sql)
const composable = (s: Step): s is Op | BatchOp =>
  s.kind === 'batch' ? s.ops.every(readsOnly) : s.kind !== 'overlap' && readsOnly(s)

/**
 * Units of reads outside a transaction (`Db.read`) that arrive in the same turn of the event loop go out
 * together on PostgreSQL: at each round, the next statement of every waiting unit is sent, up to
 * MAX_PARTS at a time, as one batch on one connection (one round trip; each statement still its own), so
 * concurrent requests' pre-reads, or a batch's rows', take one pooled connection and one round trip per
 * 32 instead of one each. Each
 * unit sees its own results only, as it would alone: when a batch fails, its statements run again one by
 * one, so a failure belongs to the unit whose statement failed. Anything but a read (a write, side-by-side
 * units) runs on its own.
 */
export class ReadCoalescer {
  private queue: Waiting[] = []
  private scheduled = false

  constructor(private readonly exec: (op: Step) => Promise<unknown>) {}

  read<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let step: IteratorResult<Step, unknown>
      try {
        step = work.next()
      } catch (err) {
        reject(err)
        return
      }
      if (step.done) {
        resolve(step.value as T)
        return
      }
      this.queue.push({ work, step, resolve: resolve as (v: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // After this turn's other callbacks: the reads they start join this one.
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    this.scheduled = false
    const waiting = this.queue
    this.queue = []
    void this.round(waiting)
  }

  /** One round: the next statement of every unit, in batches; then the units still open, again. */
  private async round(units: Waiting[]): Promise<void> {
    const reads: Waiting[] = []
    const runs: Promise<void>[] = []
    for (const u of units) {
      if (composable(u.step.value as Step)) reads.push(u)
      else runs.push(this.single(u))
    }
    for (let i = 0; i < reads.length; i += MAX_PARTS) runs.push(this.batch(reads.slice(i, i + MAX_PARTS)))
    await Promise.all(runs)
    const open = units.filter((u) => !u.step.done)
    if (open.length > 0) await this.round(open)
  }

  /** A unit's statement on its own; its result (or failure) goes back into the unit. */
  private async single(u: Waiting): Promise<void> {
    let value: unknown
    try {
      value = await this.exec(u.step.value as Step)
    } catch (err) {
      this.advance(u, () => u.work.throw(err))
      return
    }
    this.advance(u, () => u.work.next(value))
  }

  /** The statements of several units as one batch; one by one if that fails. */
  private async batch(units: Waiting[]): Promise<void> {
    if (units.length === 1) return this.single(units[0]!)
    const ops: Op[] = []
    const spans: [number, number, boolean][] = []
    for (const u of units) {
      const s = u.step.value as Op | BatchOp
      const from = ops.length
      if (s.kind === 'batch') ops.push(...s.ops)
      else ops.push(s)
      spans.push([from, ops.length, s.kind === 'batch'])
    }
    let results: unknown[]
    try {
      results = (await this.exec({ kind: 'batch', ops })) as unknown[]
    } catch {
      await Promise.all(units.map((u) => this.single(u)))
      return
    }
    units.forEach((u, k) => {
      const [from, to, nested] = spans[k]!
      const value = nested ? results.slice(from, to) : results[from]
      this.advance(u, () => u.work.next(value))
    })
  }

  private advance(u: Waiting, next: () => IteratorResult<Step, unknown>): void {
    try {
      u.step = next()
    } catch (err) {
      u.step = { done: true, value: undefined }
      u.reject(err)
      return
    }
    if (u.step.done) u.resolve(u.step.value)
  }
}
