import { ATTRIBUTE_COUNTS_KEEP_MS } from '../store/events/attribute-counts.js'
import { IP_ACCOUNTS_KEEP_MS } from '../store/events/ip-accounts.js'
import { drainBatches } from './batches.js'
import type { Job } from './types.js'

const BATCH = 5_000

/**
 * IP velocity counts the accounts of the last 10 minutes from `ip_accounts`; pairs not seen for an hour
 * can never count again. Deleting them keeps the table (and the user ids and IP hashes it holds) to about
 * an hour of traffic. Bounded batches with a turn of the event loop between them.
 */
export const velocityTrimJob: Job = {
  name: 'velocity-trim',
  scope: 'cluster',
  reads: 'ip_accounts, attribute_accounts, attribute_events',
  writes:
    'ip_accounts (deletes IP → account pairs not seen for an hour), attribute_accounts and attribute_events (deletes what is past a day and an hour)',
  intervalMs: 5 * 60_000,
  firstRunMs: 60_000,
  run: async ({ store, clock }) => {
    const before = clock.now() - IP_ACCOUNTS_KEEP_MS
    await drainBatches((size) => store.events.expireIpAccounts(before, size), BATCH)
    // Counted attributes (docs/rules.md) are counted over at most 24 hours.
    const dayBefore = clock.now() - ATTRIBUTE_COUNTS_KEEP_MS
    await drainBatches((size) => store.attributeCounts.expire(dayBefore, size), BATCH)
  },
}
