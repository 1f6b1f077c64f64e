import type { App, RouteDeps } from '../routes/types.js'
import { measureCollisionRisk } from './device.js'

/** How often the server re-measures collision risk, and how soon after start it first does. */
export const COLLISION_JOB_INTERVAL_MS = 15 * 60_000
export const COLLISION_JOB_FIRST_RUN_MS = 60_000

/**
 * Runs the collision-risk measurement periodically while the app is up. Timers never keep the process
 * alive and stop when the app closes; a failed run is logged and retried at the next interval.
 */
export function startCollisionJob(app: App, deps: RouteDeps): void {
  let running = false
  let closed = false
  const run = async () => {
    if (running || closed) return
    running = true
    try {
      await measureCollisionRisk(deps.store, deps.clock)
    } catch (err) {
      if (!closed) app.log.error({ err }, 'collision-risk measurement failed')
    } finally {
      running = false
    }
  }
  const first = setTimeout(() => void run(), COLLISION_JOB_FIRST_RUN_MS)
  const every = setInterval(() => void run(), COLLISION_JOB_INTERVAL_MS)
  first.unref()
  every.unref()
  app.addHook('onClose', async () => {
    closed = true
    clearTimeout(first)
    clearInterval(every)
  })
}
