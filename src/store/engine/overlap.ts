import type { BatchOp, Op, Work } from './db.js'

/**
 * Runs units of work in order, two side by side whenever they touch nothing in common: each item names
 * the keys of what it reads and writes (`keysOf`; null for an item that must run alone), and an item
 * starts beside the one running when their keys are disjoint. Their next statements then go out as one
 * batch (one statement on PostgreSQL, see pg-batch.ts); otherwise one after another, as a plain loop
 * would. An item that shares a key with the one before it starts only once that one has finished, so it
 * reads everything that one wrote, as in the loop; two items without a common key cannot see each
 * other's rows either way, so the results are the loop's. At most two run at once: a batch's text is
 * then the pair of their statements' texts, a bounded set of prepared statements (a new text is parsed
 * and planned on every connection, milliseconds on PostgreSQL).
 *
 * As with `together`, the items must not catch a failed statement: a failure leaves at once.
 */
export function* overlapped<T, R>(
  items: readonly T[],
  keysOf: (item: T) => readonly string[] | null,
  work: (item: T) => Work<R>,
): Work<R[]> {
  const results: R[] = new Array(items.length)
  interface Run {
    index: number
    gen: Work<R>
    op: Op | BatchOp
    keys: readonly string[] | null
  }
  let running: Run[] = []
  let next = 0
  /** Starts item i; one that finishes without a statement is done at once. */
  const start = (i: number): void => {
    const item = items[i]!
    const gen = work(item)
    const step = gen.next()
    if (step.done) results[i] = step.value
    else running.push({ index: i, gen, op: step.value, keys: keysOf(item) })
  }
  const joins = (item: T): boolean => {
    if (running.length === 0) return true
    if (running.length > 1) return false
    const held = running[0]!.keys
    const keys = keysOf(item)
    return held !== null && keys !== null && !keys.some((k) => held.includes(k))
  }
  while (next < items.length || running.length > 0) {
    while (next < items.length && joins(items[next]!)) start(next++)
    if (running.length === 0) continue
    if (running.length === 1) {
      const r = running[0]!
      const step = r.gen.next(yield r.op)
      if (step.done) {
        results[r.index] = step.value
        running = []
      } else r.op = step.value
      continue
    }
    // Both items' next statements in one batch; a nested batch's statements are spliced in.
    const ops: Op[] = []
    const spans: [number, number, boolean][] = []
    for (const r of running) {
      const from = ops.length
      if (r.op.kind === 'batch') ops.push(...r.op.ops)
      else ops.push(r.op)
      spans.push([from, ops.length, r.op.kind === 'batch'])
    }
    const answers = (yield { kind: 'batch', ops }) as unknown[]
    const still: Run[] = []
    running.forEach((r, k) => {
      const [from, to, nested] = spans[k]!
      const step = r.gen.next(nested ? answers.slice(from, to) : answers[from])
      if (step.done) results[r.index] = step.value
      else {
        r.op = step.value
        still.push(r)
      }
    })
    running = still
  }
  return results
}
