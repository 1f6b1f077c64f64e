import type { OverlapOp, OverlapPlan, Work } from './db.js'

/**
 * Runs the items as a loop would, with the engine deciding how (`OverlapOp`): SQLite runs them one after
 * another (`inOrder`); PostgreSQL keeps one statement of every running item in flight on the
 * transaction's connection (`pipelined`). An item starts once it shares no key with a running item nor
 * with an earlier item not yet started, so it reads everything an earlier item of any of its keys wrote,
 * as in the loop, and no later item of its keys has run; items without a common key cannot see each
 * other's rows either way, so the results are the loop's. An item without keys waits for every item
 * before it and holds back every item after it. The items must not catch a failed statement: a failure
 * fails the whole.
 */
export function* overlapped<T, R>(
  items: readonly T[],
  keysOf: (item: T) => readonly string[] | null,
  work: (item: T) => Work<R>,
): Work<R[]> {
  if (items.length === 0) return []
  if (items.length === 1) return [yield* work(items[0]!)]
  const op: OverlapOp = { kind: 'overlap', plan: { items, keysOf, work } as OverlapPlan }
  return (yield op) as R[]
}

/** The items one after another, each run by `run` (a synchronous engine's loop). */
export function inOrder(plan: OverlapPlan, run: (w: Work<unknown>) => unknown): unknown[] {
  return plan.items.map((item) => run(plan.work(item)))
}

/**
 * At most this many items run at once: enough to keep the server and this process both busy, few enough
 * that a group's statements in flight stay small.
 */
export const MAX_SIDE_BY_SIDE = 8

/**
 * How far past the first item not yet started an item may be started: a later item of other keys goes
 * beside a running one instead of waiting behind an earlier item held by a key (head-of-line blocking).
 */
export const LOOKAHEAD = 64

/**
 * The items side by side: each running item's statements go out through `run` as it yields them, without
 * waiting for the other items'. Resolves with the results in item order once all have finished; rejects
 * with the first failure once every started item has settled (none is left running on the connection).
 */
export function pipelined(
  plan: OverlapPlan,
  run: (w: Work<unknown>) => Promise<unknown>,
  max = MAX_SIDE_BY_SIDE,
  lookahead = LOOKAHEAD,
): Promise<unknown[]> {
  const { items, work } = plan
  const keys = items.map((item) => plan.keysOf(item))
  const results: unknown[] = new Array(items.length)
  const started: boolean[] = new Array(items.length).fill(false)
  const running = new Set<number>()
  /** Keys of the running items, with how many hold each. */
  const held = new Map<string, number>()
  let first = 0
  let failed = false
  let failure: unknown
  return new Promise((resolve, reject) => {
    const clashes = (mine: readonly string[], waiting: Set<string>): boolean =>
      mine.some((k) => held.has(k) || waiting.has(k))
    const pump = (): void => {
      while (first < items.length && started[first]) first++
      // Earlier items not yet started hold their keys against the items after them.
      const waiting = new Set<string>()
      for (let i = first; !failed && i < items.length && i < first + lookahead && running.size < max; i++) {
        if (started[i]) continue
        const mine = keys[i]!
        if (mine === null) {
          // Alone: after everything before it, and the next pump is its own end.
          if (i === first && running.size === 0) start(i)
          break
        }
        if (clashes(mine, waiting)) {
          for (const k of mine) waiting.add(k)
          continue
        }
        start(i)
      }
      if (running.size > 0) return
      if (failed) reject(failure)
      else if (first >= items.length) resolve(results)
    }
    const start = (i: number): void => {
      started[i] = true
      running.add(i)
      for (const k of keys[i] ?? []) held.set(k, (held.get(k) ?? 0) + 1)
      let w: Work<unknown>
      try {
        w = work(items[i]!)
      } catch (err) {
        settle(i, err, true)
        return
      }
      run(w).then(
        (v) => {
          results[i] = v
          settle(i, null, false)
        },
        (err) => settle(i, err, true),
      )
    }
    const settle = (i: number, err: unknown, isError: boolean): void => {
      running.delete(i)
      for (const k of keys[i] ?? []) {
        const n = held.get(k)! - 1
        if (n === 0) held.delete(k)
        else held.set(k, n)
      }
      if (isError && !failed) {
        failed = true
        failure = err
      }
      pump()
    }
    pump()
  })
}
