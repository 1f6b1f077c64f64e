import { IDEMPOTENCY_TTL_MS } from '../services/runtime/idempotency.js'
import { drainBatches } from './batches.js'
import type { Job } from './types.js'

const BATCH = 5_000

/** Idempotency keys past their 24 hours answer nothing any more: delete them in bounded batches. */
export const idempotencyExpiryJob: Job = {
  name: 'idempotency-expiry',
  scope: 'cluster',
  reads: 'idempotency_keys',
  writes: 'idempotency_keys (deletes keys older than 24 hours)',
  intervalMs: 3600_000,
  firstRunMs: 60_000,
  run: async ({ store, clock }) => {
    const before = clock.now() - IDEMPOTENCY_TTL_MS
    await drainBatches((size) => store.idempotency.expire(before, size), BATCH)
  },
}
