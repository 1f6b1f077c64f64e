import { within } from '../util.js'
import { FONT_NAMES, measureFonts } from './fonts.js'

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

/** What the worker reports: its identity, and the installed fonts when it has OffscreenCanvas 2D. */
export interface WorkerReport {
  identity: Identity
  fonts: string[] | null
}

export interface WorkerRun {
  /** Settles once the worker made its first font lookup (at once when no worker could be made). */
  started: Promise<void>
  /** Null when no worker runs (a CSP without blob: in worker-src) or it does not answer in time. */
  report: Promise<WorkerReport | null>
}

/**
 * A dedicated Web Worker (Blob URL) that measures the fonts, then reads its identity. Fonts first: they
 * are the longest probe, run here beside the page's own, and by the time the worker reads the time zone
 * the page has paid for ICU's first date format (a cache the whole process shares).
 */
export function startWorker(timeoutMs = 1000): WorkerRun {
  let worker: Worker
  let url: string
  try {
    // Measuring no family still measures the base fonts: the worker's first font lookup, which needs a
    // turn of the main thread, is over when it says it started.
    const source = `const measure=${measureFonts};let c=null,fonts=null;try{c=new OffscreenCanvas(1,1).getContext('2d');if(c)measure(c,[])}catch(e){}postMessage(0);try{if(c)fonts=measure(c,${JSON.stringify(FONT_NAMES)})}catch(e){}postMessage({fonts,identity:(${readIdentity})()})`
    url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }))
    worker = new Worker(url)
  } catch {
    return { started: Promise.resolve(), report: Promise.resolve(null) }
  }
  let onStart = () => {}
  const started = new Promise<void>((resolve) => {
    onStart = resolve
  })
  const answer = new Promise<WorkerReport | null>((resolve) => {
    worker.onmessage = (e: MessageEvent<WorkerReport | 0>) => {
      if (e.data === 0) onStart()
      else resolve(e.data)
    }
    worker.onerror = () => {
      onStart()
      resolve(null)
    }
  })
  const report = within(answer, timeoutMs, null).then((r) => {
    worker.terminate()
    URL.revokeObjectURL(url)
    return r
  })
  return { started, report }
}
