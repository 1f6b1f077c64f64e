import { measureJa4Signatures } from '../services/devices/ja4-signatures.js'
import type { Job } from './types.js'

/** Recomputes the JA4s that are predominantly spoofing (`known_spoof_signature`) from the daily counts. */
export function ja4SignaturesJob(retentionDays: number): Job {
  return {
    name: 'ja4-signatures',
    scope: 'cluster',
    reads:
      'ja4_daily (beacons and spoofing beacons per JA4, last 30 days or the retention period if shorter)',
    writes: 'ja4_signatures (the flagged JA4s); ja4_daily (deletes the days that left the window)',
    intervalMs: 10 * 60_000,
    firstRunMs: 60_000,
    run: async ({ store, clock, log }) => {
      const n = await measureJa4Signatures(store, clock.now(), retentionDays)
      if (n > 0) log.info(`ja4-signatures: ${n} JA4s flagged as spoofing signatures`)
    },
  }
}

/** Loads the flagged JA4s into this process's memory, where scoring reads them. */
export const ja4SignaturesCacheJob: Job = {
  name: 'ja4-signatures-cache',
  scope: 'node',
  reads: 'ja4_signatures',
  writes: "this process's in-memory JA4 signatures (Ja4Signatures), read by every score",
  intervalMs: 60_000,
  firstRunMs: 0,
  run: async ({ store, clock, ja4Signatures }) => ja4Signatures.refresh(store, clock.now()),
}
