import type { BeaconDevice } from '../../beacon/contract.js'
import type { TlsSignals } from '../../scoring/types.js'
import type { Ja4Tally } from '../../store/devices/ja4.js'
import { DAY_MS } from '../../store/events/aggregates.js'
import type { Store } from '../../store/index.js'
import { knownTool } from '../../tls/known-tools.js'

/**
 * `known_spoof_signature`: a JA4 whose beacons in this deployment are predominantly spoofing. The
 * `ja4-signatures` job (src/jobs/ja4-signatures.ts) derives the flagged set from the daily counts of
 * `ja4_daily` and stores it; every node loads it into memory (`ja4-signatures-cache`), so a score only
 * looks a JA4 up in a map. Thresholds (docs/beacon.md explains them):
 */
/** Days of beacons counted (fewer when VERDICT_RETENTION_DAYS is shorter). */
export const JA4_WINDOW_DAYS = 30
/** Beacons a JA4 needs in the window before its share means anything. */
export const JA4_MIN_SESSIONS = 50
/** Share of those beacons that must be spoofing. */
export const JA4_MIN_SHARE = 0.7

/**
 * Whether a beacon's own integrity results say the browser was faking its identity: an overridden
 * native function, canvas noise, a worker or engine that contradicts the page, an OS-truth signal or
 * the platform contradicting the user agent, or an antidetect verdict that `antidetect_browser` would
 * report (score 50+ with medium or high confidence). Headless and emulated are not spoofing: automated
 * and virtualised browsers are honest about what they are, and share the JA4 of the real browser.
 */
export function isSpoofingBeacon(flags: Partial<BeaconDevice>): boolean {
  if (
    flags.is_tampered === true ||
    flags.is_noise_injected === true ||
    flags.is_context_mismatch === true ||
    flags.is_engine_mismatch === true ||
    flags.is_os_mismatch === true ||
    flags.ua_consistent === false
  )
    return true
  const conf = flags.antidetect_confidence
  return (flags.antidetect_score ?? 0) >= 50 && (conf === 'medium' || conf === 'high')
}

/** The first day counted for a run at `nowMs`: whole UTC days, never further back than retention. */
export function ja4WindowStart(nowMs: number, retentionDays: number): number {
  const days = Math.min(JA4_WINDOW_DAYS, retentionDays)
  return Math.floor((nowMs - days * DAY_MS) / DAY_MS) * DAY_MS
}

/**
 * The JA4s that count as spoofing signatures: enough beacons, a high enough spoofing share, and not a
 * known tool's (those already give `forged_beacon`; both at once would let one signal block).
 */
export function flaggedSignatures(tallies: readonly Ja4Tally[]): Ja4Tally[] {
  return tallies.filter(
    (t) =>
      t.sessions >= JA4_MIN_SESSIONS && t.spoofing / t.sessions >= JA4_MIN_SHARE && knownTool(t.ja4) === null,
  )
}

/**
 * One run of the job: drops the daily counts that fell out of the window (so nothing outlives
 * retention), then recomputes and stores the flagged set. Returns how many JA4s are flagged.
 */
export async function measureJa4Signatures(
  store: Store,
  nowMs: number,
  retentionDays: number,
): Promise<number> {
  const since = ja4WindowStart(nowMs, retentionDays)
  await store.ja4.prune(since)
  const flagged = flaggedSignatures(await store.ja4.tallies(since))
  await store.ja4.replaceSignatures(flagged, nowMs)
  return flagged.length
}

/** What the scoring path learns about a flagged JA4. */
export interface SpoofSignature {
  sessions: number
  spoofing: number
  minSessions: number
  minShare: number
}

/** This process's copy of the flagged set, refreshed from storage by a background job. */
export class Ja4Signatures {
  private flagged = new Map<string, Ja4Tally>()
  refreshedMs: number | null = null

  async refresh(store: Store, nowMs: number): Promise<void> {
    this.flagged = new Map((await store.ja4.signatures()).map((s) => [s.ja4, s]))
    this.refreshedMs = nowMs
  }

  get(ja4: string | null): SpoofSignature | null {
    const s = ja4 ? this.flagged.get(ja4) : undefined
    if (!s) return null
    return {
      sessions: s.sessions,
      spoofing: s.spoofing,
      minSessions: JA4_MIN_SESSIONS,
      minShare: JA4_MIN_SHARE,
    }
  }
}

/** What the engine and the device profile learn from the JA4 of a joined beacon; null without one. */
export function beaconTls(ja4: string | null | undefined, signatures: Ja4Signatures): TlsSignals | null {
  if (!ja4) return null
  return { ja4, knownTool: knownTool(ja4), spoofSignature: signatures.get(ja4) }
}
