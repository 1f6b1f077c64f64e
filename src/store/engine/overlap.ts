import type { OverlapOp, OverlapPlan, Work } from './db.js'

/**
 * Runs the items as a loop would, with the engine deciding how (`OverlapOp`): SQLite runs them one after
 * another (`inOrder`); PostgreSQL keeps one statement of every running item in flight on the
 * transaction's connection (`pipelined`). An item starts once every item before it has started and it
 * shares no key with a running one, so it reads everything an earlier item of any of its keys wrote, as
 * in the loop; items without a common key cannot see each other's rows either way, so the results are
 * the loop's. The items must not catch a failed statement: a failure fails the whole.
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
 * The items side by side: each running item's statements go out through `run` as it yields them, without
 * waiting for the other items'. Resolves with the results in item order once all have finished; rejects
 * with the first failure once every started item has settled (none is left running on the connection).
 */
export function pipelined(
  plan: OverlapPlan,
  run: (w: Work<unknown>) => Promise<unknown>,
  max = MAX_SIDE_BY_SIDE,
): Promise<unknown[]> {
  const { items, work } = plan
  const keys = items.map((item) => plan.keysOf(item))
  const results: unknown[] = new Array(items.length)
  const running = new Set<number>()
  let next = 0
  let failed = false
  let failure: unknown
  return new Promise((resolve, reject) => {
    const admits = (i: number): boolean => {
      if (running.size === 0) return true
      if (running.size >= max) return false
      const mine = keys[i]!
      if (mine === null) return false
      for (const r of running) {
        const held = keys[r]!
        if (held === null || mine.some((k) => held.includes(k))) return false
      }
      return true
    }
    const pump = (): void => {
      while (!failed && next < items.length && admits(next)) start(next++)
      if (running.size > 0) return
      if (failed) reject(failure)
      else if (next >= items.length) resolve(results)
    }
    const start = (i: number): void => {
      running.add(i)
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
      if (isError && !failed) {
        failed = true
        failure = err
      }
      pump()
    }
    pump()
  })
}
