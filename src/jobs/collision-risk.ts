import { measureCollisionRisk } from '../services/devices/device.js'
import type { Job } from './types.js'

/** Re-measures how often a device fingerprint covers more than one person (`collision_risk`). */
export const collisionRiskJob: Job = {
  name: 'collision-risk',
  scope: 'cluster',
  reads: 'device_links and device_link_counts (token identities per fingerprint, last 90 days)',
  writes: 'device_collision_rates (one rate per platform)',
  intervalMs: 15 * 60_000,
  firstRunMs: 60_000,
  run: async ({ store, clock }) => {
    await measureCollisionRisk(store, clock)
  },
}
