import { retentionCutoff } from '../store/retention.js'
import type { Job } from './types.js'

/** Rows per delete: one short transaction, so scoring waits at most a few milliseconds for the lock. */
export const RETENTION_BATCH = 2_000

/**
 * Deletes events (with their device observations), lookups, device links last seen before the cutoff,
 * beacon observations and the matching rollup hours and ASN days
 * older than VERDICT_RETENTION_DAYS, tenant by tenant, in bounded batches with a turn of the event loop
 * between them so requests interleave.
 */
export function retentionJob(days: number): Job {
  return {
    name: 'retention',
    scope: 'cluster',
    reads: 'tenants; events and lookups older than the retention period',
    writes:
      'events, device_observations, lookups, beacon_observations, device_links, device_link_counts, event_rollup, asn_daily (deletes what is past retention)',
    intervalMs: 3600_000,
    firstRunMs: 60_000,
    run: async ({ store, clock, log }) => {
      const cutoff = retentionCutoff(clock.now(), days)
      let removed = 0
      // Batch after batch until one comes back short, yielding to requests in between.
      const drain = async (batch: (size: number) => Promise<number>) => {
        for (;;) {
          const n = await batch(RETENTION_BATCH)
          removed += n
          if (n < RETENTION_BATCH) return
          await new Promise((r) => setImmediate(r))
        }
      }
      for (const tenant of await store.tenants.list()) {
        await drain((size) => store.retention.events(tenant.id, cutoff, size))
        await drain((size) => store.retention.lookups(tenant.id, cutoff, size))
        await drain((size) => store.retention.deviceLinks(tenant.id, cutoff, size))
        await store.retention.aggregates(tenant.id, cutoff)
      }
      await drain((size) => store.retention.beacons(cutoff, size))
      if (removed > 0) log.info(`retention: deleted ${removed} rows older than ${days} days`)
    },
  }
}
