import type { Job } from './types.js'

/** Trap hits past their 30-day window no longer count: delete them. */
export const trapRetentionJob: Job = {
  name: 'trap-retention',
  scope: 'cluster',
  reads: 'trap_hits',
  writes: 'trap_hits (deletes hits older than 30 days)',
  intervalMs: 3600_000,
  firstRunMs: 0,
  run: async ({ store, clock }) => {
    await store.network.pruneTraps(clock.now())
  },
}
