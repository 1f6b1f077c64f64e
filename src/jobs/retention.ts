import type { Store } from '../store/index.js'
import { type PartitionedTable, parsePartition } from '../store/schema/partitions.js'
import { retentionCutoff } from '../store/schema/retention.js'
import { drainBatches } from './batches.js'
import type { Job, JobContext } from './types.js'

/** Rows per delete: one short transaction, so scoring waits at most a few milliseconds for the lock. */
export const RETENTION_BATCH = 2_000

/**
 * Deletes events (with their device observations), lookups, device links last seen before the cutoff,
 * beacon observations and the matching rollup hours and ASN days
 * older than VERDICT_RETENTION_DAYS, tenant by tenant, in bounded batches with a turn of the event loop
 * between them so requests interleave. On PostgreSQL it first creates the coming months' partitions
 * and drops the months wholly past the period; the batches then trim what is left.
 */
export function retentionJob(days: number): Job {
  return {
    name: 'retention',
    scope: 'cluster',
    reads: 'tenants; events and lookups older than the retention period; the partition catalog (PostgreSQL)',
    writes:
      'events, device_observations, lookups, beacon_observations, device_links, device_link_counts, event_rollup, asn_daily (deletes what is past retention); on PostgreSQL creates and drops their monthly partitions',
    intervalMs: 3600_000,
    firstRunMs: 60_000,
    run: async ({ store, clock, log }) => {
      const cutoff = retentionCutoff(clock.now(), days)
      let removed = 0
      const pg = store.partitions.enabled
      const held = pg ? await partitionStep(store, clock.now(), cutoff, log) : new Set<PartitionedTable>()
      const drain = async (batch: (size: number) => Promise<number>) => {
        removed += await drainBatches(batch, RETENTION_BATCH)
      }
      for (const tenant of await store.tenants.list()) {
        if (pg) {
          for (const table of ['events', 'lookups'] as const)
            if (!held.has(table)) await drain((size) => store.partitions.trim(table, tenant.id, cutoff, size))
        } else {
          await drain((size) => store.retention.events(tenant.id, cutoff, size))
          await drain((size) => store.retention.lookups(tenant.id, cutoff, size))
        }
        // Links go only when their observations could go too (a held month keeps both).
        if (!held.has('device_observations'))
          await drain((size) => store.retention.deviceLinks(tenant.id, cutoff, size))
        // The rollup hours go with their events, so stats never lack hours whose events remain.
        if (!held.has('events')) await store.retention.aggregates(tenant.id, cutoff)
      }
      await drain((size) => store.retention.beacons(cutoff, size))
      if (removed > 0) log.info(`retention: deleted ${removed} rows older than ${days} days`)
    },
  }
}

/**
 * PostgreSQL: this and next month's partitions ahead of time, whole months past the period dropped at
 * once, so the batches only trim the boundary month and the default partition. Returns the tables of
 * which an old month could not be dropped (its lock did not come in time): they are left alone until
 * the next run rather than emptied row by row.
 */
async function partitionStep(
  store: Store,
  nowMs: number,
  cutoffMs: number,
  log: JobContext['log'],
): Promise<Set<PartitionedTable>> {
  const report = await store.partitions.ensure(nowMs)
  await store.partitions.dropBefore(cutoffMs, report)
  for (const c of report.created) log.info(`retention: created partition ${c.name} (${c.rows} rows moved in)`)
  for (const d of report.dropped) log.info(`retention: dropped partition ${d.name} (about ${d.rows} rows)`)
  const held = new Set<PartitionedTable>()
  for (const s of report.skipped) {
    log.warn({ partition: s.name, err: s.error }, 'retention: partition step left for the next run')
    const p = parsePartition(s.name)
    if (p && p.toMs <= cutoffMs) held.add(p.table)
  }
  return held
}
