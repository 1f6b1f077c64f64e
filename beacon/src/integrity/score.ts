import type { AntidetectConfidence, BeaconFlag } from '../../../src/beacon/contract.js'

/**
 * Antidetect score: weights of the spoofing signals, summed and capped at 100. Headless and emulated are
 * automation, not fingerprint spoofing, and have their own reasons, so they add nothing here.
 * Confidence grows with independent signals: 0-1 low, 2 medium, 3+ high. One signal alone stays below 50.
 */
export const ANTIDETECT_WEIGHTS: Partial<Record<BeaconFlag, number>> = {
  is_noise_injected: 35,
  is_tampered: 30,
  is_context_mismatch: 30,
  is_engine_mismatch: 25,
  is_os_mismatch: 25,
  ua_consistent: 15,
}

export function antidetect(flags: Record<BeaconFlag, boolean>): {
  score: number
  confidence: AntidetectConfidence
} {
  let score = 0
  let signals = 0
  for (const [flag, weight] of Object.entries(ANTIDETECT_WEIGHTS) as [BeaconFlag, number][]) {
    // ua_consistent is the one flag where false is the finding.
    const hit = flag === 'ua_consistent' ? !flags[flag] : flags[flag]
    if (!hit) continue
    score += weight
    signals++
  }
  const confidence = signals >= 3 ? 'high' : signals === 2 ? 'medium' : 'low'
  return { score: Math.min(100, score), confidence }
}
