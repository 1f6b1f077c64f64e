import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../services/console/console-auth.js'
import type { Job } from './types.js'

/**
 * Console sessions past their idle or absolute expiry can never be used again: delete them, so the
 * table holds live sessions only even when nobody presents an old cookie or signs in again.
 */
export const consoleSessionExpiryJob: Job = {
  name: 'console-session-expiry',
  scope: 'cluster',
  reads: 'console_sessions',
  writes: 'console_sessions (deletes sessions idle for 30 minutes or older than 12 hours)',
  intervalMs: 15 * 60_000,
  firstRunMs: 60_000,
  run: async ({ store, clock }) => {
    const now = clock.now()
    await store.console.expireSessions(now - SESSION_IDLE_MS, now - SESSION_MAX_MS)
  },
}
