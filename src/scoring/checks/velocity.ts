import type { CheckFamily } from '../types.js'
import { fire } from './fire.js'

export const VELOCITY_WINDOW_MS = 10 * 60_000

/** Accounts per IP in the velocity window, in two tiers from the tenant's thresholds. */
export const velocity: CheckFamily = (input) => {
  const n = input.history.ipAccounts
  if (n === null) return []
  const t = input.config.thresholds
  const w = input.config.weights
  const high = n >= t.ipVelocityHigh
  if (!high && n < t.ipVelocityMed) return []
  return [
    fire('ip_velocity', {
      key: high ? 'ipVelocityHigh' : 'ipVelocityMed',
      weight: high ? w.ipVelocityHigh : w.ipVelocityMed,
      message: `${n} different accounts used this IP address in the last 10 minutes.`,
      evidence: {
        accounts: n,
        window_minutes: VELOCITY_WINDOW_MS / 60_000,
        threshold: high ? t.ipVelocityHigh : t.ipVelocityMed,
        tier: high ? 'high' : 'medium',
      },
    }),
  ]
}
