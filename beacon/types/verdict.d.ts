/**
 * Types of the verdict browser library (`@verdict/beacon`): the ES module build (verdict.mjs) exports
 * these; the classic build (verdict.js) defines them on the global `Verdict` (see global.d.ts).
 * Kept equal to beacon/src by beacon/types/check.ts (part of `npm run typecheck`).
 */

export interface CollectOptions {
  /** Publishable key (`pk_…`): the only kind allowed in a page. */
  key: string
  /** Verdict's origin; defaults to the origin the script was loaded from. */
  endpoint?: string
}

export interface WatchOptions extends CollectOptions {
  /** Milliseconds between beacons while the page is visible (default 60000). */
  interval?: number
  /** Called with each beacon's answer. */
  onBeacon?: (result: CollectResult) => void
}

/** Integrity flags of the device, as the beacon measured them. */
export type BeaconFlag =
  | 'is_headless'
  | 'ua_consistent'
  | 'is_emulated'
  | 'is_noise_injected'
  | 'is_tampered'
  | 'is_context_mismatch'
  | 'is_engine_mismatch'
  | 'is_os_mismatch'

/** What collect() resolves to: send `device_id` and `visit_id` with your POST /v1/score. */
export type CollectResult = Record<BeaconFlag, boolean> & {
  antidetect_score: number
  antidetect_confidence: 'low' | 'medium' | 'high'
  device_id: string
  visit_id: string
}

/** Fingerprints the browser and sends one beacon; rejects on a secret key or a refused beacon. */
export declare function collect(options: CollectOptions): Promise<CollectResult>

/** Sends a beacon now and every `interval` ms while the page is visible; returns a stop function. */
export declare function watch(options: WatchOptions): () => void

declare const Verdict: { collect: typeof collect; watch: typeof watch }
export default Verdict
