import { drainBatches } from './batches.js'
import type { Job } from './types.js'

/** How long webhook messages and their delivery records are kept, whatever became of them. */
export const WEBHOOK_RETENTION_MS = 30 * 86400_000

/** Webhook messages older than 30 days go, with their deliveries (the deliveries log's window). */
export const webhookRetentionJob: Job = {
  name: 'webhook-retention',
  scope: 'cluster',
  reads: 'webhook_messages older than 30 days',
  writes: 'webhook_messages, webhook_deliveries (deletes what is older than 30 days)',
  intervalMs: 3600_000,
  firstRunMs: 120_000,
  run: async ({ store, clock, log }) => {
    const cutoff = clock.now() - WEBHOOK_RETENTION_MS
    const removed = await drainBatches((size) => store.webhookOutbox.expire(cutoff, size), 1000)
    if (removed > 0) log.info(`webhook retention: deleted ${removed} messages older than 30 days`)
  },
}
