import { within } from '../util.js'

/** The browser identity as one execution context sees it. */
export interface Identity {
  ua: string
  platform: string
  cores: number
  languages: string
  timezone: string
  renderer: string
}

/**
 * Reads the identity of the context it runs in. Self-contained on purpose: the worker runs its source text,
 * so it may reference nothing outside itself.
 */
export function readIdentity(knownRenderer?: string): Identity {
  const n = navigator as unknown as { userAgent: string; platform?: string; hardwareConcurrency?: number }
  const langs = (navigator as unknown as { languages?: readonly string[] }).languages
  let renderer = knownRenderer || ''
  // The page passes the renderer it already read: a second WebGL context costs tens of milliseconds.
  if (knownRenderer === undefined) {
    try {
      const gl = new OffscreenCanvas(1, 1).getContext('webgl')
      if (gl) {
        const dbg = gl.getExtension('WEBGL_debug_renderer_info')
        renderer = String(gl.getParameter(dbg ? dbg.UNMASKED_RENDERER_WEBGL : gl.RENDERER))
        gl.getExtension('WEBGL_lose_context')?.loseContext()
      }
    } catch {
      renderer = ''
    }
  }
  let timezone = ''
  try {
    timezone = Intl.DateTimeFormat().resolvedOptions().timeZone || ''
  } catch {
    timezone = ''
  }
  return {
    ua: n.userAgent,
    platform: n.platform || '',
    cores: n.hardwareConcurrency || 0,
    languages: langs ? langs.join(',') : '',
    timezone,
    renderer,
  }
}

/** The same identity read inside a dedicated Web Worker started from a Blob URL; null when none can run. */
export function workerIdentity(timeoutMs = 1000): Promise<Identity | null> {
  let worker: Worker
  let url: string
  try {
    const source = `postMessage((${readIdentity.toString()})())`
    url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }))
    worker = new Worker(url)
  } catch {
    // A page CSP without blob: in worker-src refuses the worker: the check is then skipped.
    return Promise.resolve(null)
  }
  const answer = new Promise<Identity | null>((resolve) => {
    worker.onmessage = (e: MessageEvent<Identity>) => resolve(e.data)
    worker.onerror = () => resolve(null)
  })
  return within(answer, timeoutMs, null).then((identity) => {
    worker.terminate()
    URL.revokeObjectURL(url)
    return identity
  })
}
