import type { BeaconBody, BeaconDevice, BeaconReply } from '../../src/beacon/contract.js'
import { fingerprint } from './fingerprint.js'

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

export type CollectResult = BeaconDevice & { device_id: string; visit_id: string }

export interface VerdictApi {
  collect(options: CollectOptions): Promise<CollectResult>
  watch(options: WatchOptions): () => void
}

export function makeApi(defaultEndpoint: string): VerdictApi {
  /** `watchOf`: the visit id of the watch's first beacon, which ties this beacon to its session. */
  async function send(options: CollectOptions, watchOf?: string): Promise<CollectResult> {
    if (!options || typeof options.key !== 'string' || !options.key.startsWith('pk_')) {
      // A secret key in a page would be readable by anyone: refuse it before it is sent anywhere.
      throw new TypeError('Verdict: a publishable key (pk_…) is required')
    }
    const fp = await fingerprint()
    const body: BeaconBody = { key: options.key, device_id: fp.device_id, device: fp.device }
    if (watchOf) body.watch_of = watchOf
    const base = (options.endpoint || defaultEndpoint).replace(/\/+$/, '')
    const res = await fetch(`${base}/v1/beacon`, {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
      // A string body with no custom header is a CORS "simple" request (text/plain): no preflight round
      // trip before it. The key travels in the body; the server still checks the Origin against it.
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`Verdict: beacon refused (HTTP ${res.status})`)
    const reply = (await res.json()) as Partial<BeaconReply>
    if (typeof reply.visit_id !== 'string') throw new Error('Verdict: malformed beacon reply')
    return {
      device_id: typeof reply.device_id === 'string' ? reply.device_id : fp.device_id,
      visit_id: reply.visit_id,
      ...fp.device,
    }
  }

  const collect = (options: CollectOptions) => send(options)

  function watch(options: WatchOptions): () => void {
    const interval = Math.max(100, Number(options.interval) || 60000)
    let timer: ReturnType<typeof setTimeout> | undefined
    let last = 0
    let stopped = false
    // One beacon at a time: the next waits for the one in flight, so on a slow network the second beacon
    // already knows the first one's visit instead of starting a session of its own.
    let inFlight = false
    // The first beacon's visit: every later beacon of this watch names it, so the backend's score (with
    // any of the watch's visit ids) reads the watch's beacons and nobody else's.
    let first: string | undefined
    const hidden = () => document.visibilityState === 'hidden'
    const schedule = (ms: number) => {
      clearTimeout(timer)
      timer = setTimeout(tick, ms)
    }
    const scheduleNext = () => {
      if (!stopped && !hidden() && !inFlight) schedule(Math.max(0, last + interval - Date.now()))
    }
    function tick() {
      if (stopped || hidden() || inFlight) return
      last = Date.now()
      inFlight = true
      send(options, first)
        .then((result) => {
          first ??= result.visit_id
          options.onBeacon?.(result)
        })
        .catch(() => {
          // A failed beacon is retried at the next interval; watch mode never throws into the page.
        })
        .finally(() => {
          inFlight = false
          scheduleNext()
        })
    }
    function onVisibility() {
      if (stopped) return
      if (hidden()) clearTimeout(timer)
      else scheduleNext()
    }
    document.addEventListener('visibilitychange', onVisibility)
    tick()
    return () => {
      stopped = true
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisibility)
    }
  }

  return { collect, watch }
}
