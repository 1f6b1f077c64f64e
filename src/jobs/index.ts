import { asnRatesJob } from './asn-rates.js'
import { collisionRiskJob } from './collision-risk.js'
import { consoleSessionExpiryJob } from './console-session-expiry.js'
import { feedReloadJob } from './feed-reload.js'
import { idempotencyExpiryJob } from './idempotency-expiry.js'
import { ja4SignaturesCacheJob, ja4SignaturesJob } from './ja4-signatures.js'
import { listExpiryJob } from './list-expiry.js'
import { plannerStatisticsJob } from './planner-statistics.js'
import { retentionJob } from './retention.js'
import { storageCompactionJob } from './storage-compaction.js'
import { trapRetentionJob } from './trap-retention.js'
import type { Job } from './types.js'
import { velocityTrimJob } from './velocity-trim.js'
import { webhookRetentionJob } from './webhook-retention.js'

export { localLease } from './lease.js'
export { Scheduler } from './scheduler.js'
export type { Job, JobContext, JobLease, JobLog } from './types.js'

/**
 * Every background job of the service: the one list server.ts starts (and tests run with `runNow`).
 * A new job is a file in this directory and a line here.
 */
export function backgroundJobs(settings: { feedsReloadMs: number; retentionDays: number }): Job[] {
  return [
    asnRatesJob,
    collisionRiskJob,
    trapRetentionJob,
    retentionJob(settings.retentionDays),
    feedReloadJob(settings.feedsReloadMs),
    ja4SignaturesJob(settings.retentionDays),
    ja4SignaturesCacheJob,
    storageCompactionJob,
    idempotencyExpiryJob,
    consoleSessionExpiryJob,
    velocityTrimJob,
    webhookRetentionJob,
    listExpiryJob,
    plannerStatisticsJob,
  ]
}
