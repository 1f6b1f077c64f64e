/**
 * Deletes in bounded batches: calls `batch(size)` until one comes back short, with a turn of the event
 * loop between batches so requests interleave. Returns how many rows the batches removed in all.
 */
export async function drainBatches(batch: (size: number) => Promise<number>, size: number): Promise<number> {
  let removed = 0
  for (;;) {
    const n = await batch(size)
    removed += n
    if (n < size) return removed
    await new Promise((r) => setImmediate(r))
  }
}
