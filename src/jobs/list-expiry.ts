import { expireListEntries } from '../services/rules/lists.js'
import type { Job } from './types.js'

/**
 * List entries past their `expires_ms` are deleted, each with a `list.entry_expired` webhook message.
 * They stopped matching at their expiry already (the match checks the time); this only tidies up.
 */
export const listExpiryJob: Job = {
  name: 'list-expiry',
  scope: 'cluster',
  reads: 'list_entries whose expires_ms has passed',
  writes: 'list_entries (deletes them), webhook_messages (list.entry_expired)',
  intervalMs: 60_000,
  firstRunMs: 30_000,
  run: async ({ store, clock, log }) => {
    const removed = await expireListEntries({ store, clock })
    if (removed > 0) log.info(`list expiry: deleted ${removed} expired list entries`)
  },
}
