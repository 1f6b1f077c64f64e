/**
 * The wire contract of the browser beacon (`POST /v1/beacon`), shared by the browser library under beacon/
 * and the server. Pure data: no Node or DOM imports, so both sides can import it.
 */

/** Integrity flags the beacon reports, one per request flag of the spec's `device` object. */
export const BEACON_FLAGS = [
  'is_headless',
  'ua_consistent',
  'is_emulated',
  'is_noise_injected',
  'is_tampered',
  'is_context_mismatch',
  'is_engine_mismatch',
  'is_os_mismatch',
] as const

export type BeaconFlag = (typeof BEACON_FLAGS)[number]

export type AntidetectConfidence = 'low' | 'medium' | 'high'

/** The `device` object of a beacon: exactly the flags plus the antidetect verdict, nothing raw. */
export type BeaconDevice = Record<BeaconFlag, boolean> & {
  antidetect_score: number
  antidetect_confidence: AntidetectConfidence
}

/** Keys of the `device` object, in the order the library writes them. */
export const BEACON_DEVICE_KEYS = [...BEACON_FLAGS, 'antidetect_score', 'antidetect_confidence'] as const

/**
 * The JSON body of `POST /v1/beacon`: the fingerprint hash and the integrity results, nothing else, plus
 * the publishable key when it is not sent in the header (the library's form: text/plain, no preflight).
 */
export interface BeaconBody {
  key?: string
  device_id: string
  device: BeaconDevice
  /**
   * Watch mode: the `visit_id` of the watch's first beacon, sent with each later one. It ties the
   * beacons of one page into a session, and only a score that names a visit of that session (its
   * `visit_id`) reads them as timeline points: a forged beacon cannot name a visit it never saw.
   */
  watch_of?: string
}

/** Top-level keys of the body the library sends (`watch_of` only from the second watch beacon on). */
export const BEACON_BODY_KEYS = ['key', 'device_id', 'device'] as const
export const BEACON_WATCH_KEY = 'watch_of'

/** A visit id as the server issues it. */
export const VISIT_ID_PATTERN = /^vis_[0-9A-Za-z]{16}$/

/** What the server answers (200): the page hands both to its backend. */
export interface BeaconReply {
  device_id: string
  visit_id: string
}

/** `device_id` is SHA-256 as lower-case hex. */
export const DEVICE_ID_PATTERN = /^[0-9a-f]{64}$/

/** Header carrying the publishable key in the preflighted form (application/json). */
export const BEACON_KEY_HEADER = 'x-api-key'
