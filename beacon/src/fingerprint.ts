import { BEACON_FLAGS, type BeaconDevice, type BeaconFlag } from '../../src/beacon/contract.js'
import { hashHex } from './hash.js'
import { isEmulated, isHeadless } from './integrity/automation.js'
import { contextMismatch, engineMismatch, osMismatch, uaConsistent } from './integrity/consistency.js'
import { antidetect } from './integrity/score.js'
import { isTampered } from './integrity/tamper.js'
import { probeAudio } from './probes/audio.js'
import { probeCanvas } from './probes/canvas.js'
import { probeFonts } from './probes/fonts.js'
import { probeWebgl } from './probes/webgl.js'
import { readIdentity, startWorker } from './probes/worker.js'
import { attempt, nav, within, yieldToLoop } from './util.js'

export interface Fingerprint {
  device_id: string
  device: BeaconDevice
}

/** The stable components, one line each. They are hashed here and never leave the page. */
function components(canvas: string, gl: string, audio: string, fonts: Set<string>): string {
  const n = nav()
  const s = window.screen
  // Sorted so that rotating a phone does not change the device.
  const dims = [s.width, s.height].sort((a, b) => a - b).join('x')
  const tz = attempt(() => Intl.DateTimeFormat().resolvedOptions().timeZone, '')
  return [
    `canvas:${canvas}`,
    `webgl:${gl}`,
    `audio:${audio}`,
    `fonts:${[...fonts].sort().join(',')}`,
    `screen:${dims}x${s.colorDepth}x${s.pixelDepth}@${window.devicePixelRatio}`,
    `tz:${tz}`,
    `languages:${(n.languages || [n.language]).join(',')}`,
    `cores:${n.hardwareConcurrency}`,
    `memory:${n.deviceMemory}`,
    `touch:${n.maxTouchPoints}:${'ontouchstart' in window}`,
    `platform:${n.platform}`,
  ].join('\n')
}

async function compute(): Promise<Fingerprint> {
  const n = nav()
  // The worker (fonts, its own identity) and the audio render run beside the page's probes. The worker's
  // start and its first font lookup need turns of the main thread: the page waits for them (bounded,
  // should the worker never start), which costs it nothing, as its own probes still end first.
  const worker = startWorker()
  await within(worker.started, 50, undefined)
  const audioDone = probeAudio().catch(() => 'error')
  const tampered = attempt(() => isTampered(window), false)
  const gl = attempt(probeWebgl, null)
  await yieldToLoop()
  const canvas = attempt(probeCanvas, { image: '', noisy: false })
  await yieldToLoop()
  const page = readIdentity(gl ? gl.renderer : '')
  // The checks that need neither the worker nor the fonts run while the worker finishes.
  const headless = attempt(() => isHeadless(n, window), false)
  const consistent = attempt(() => uaConsistent(n), true)
  const engine = attempt(() => engineMismatch(n.userAgent), false)
  const report = await worker.report
  // Without a worker the page measures the fonts itself.
  const fonts = report?.fonts ? new Set(report.fonts) : attempt(probeFonts, new Set<string>())
  const flags: Record<BeaconFlag, boolean> = {
    is_headless: headless,
    ua_consistent: consistent,
    is_emulated: isEmulated(gl),
    is_noise_injected: canvas.noisy,
    is_tampered: tampered,
    is_context_mismatch: contextMismatch(page, report?.identity ?? null),
    is_engine_mismatch: engine,
    is_os_mismatch: attempt(() => osMismatch(n, gl, fonts), false),
  }
  const { score, confidence } = antidetect(flags)
  const device = {} as BeaconDevice
  for (const f of BEACON_FLAGS) device[f] = flags[f]
  device.antidetect_score = score
  device.antidetect_confidence = confidence
  // Injected noise would give a new id per readback: a noisy canvas is left out so the id stays put.
  const text = components(
    canvas.noisy ? 'noisy' : canvas.image,
    gl ? `${gl.vendor}|${gl.renderer}|${gl.summary}` : 'none',
    await audioDone,
    fonts,
  )
  return { device_id: await hashHex(text), device }
}

let cached: Promise<Fingerprint> | null = null

/** Computed once per page: the same page cannot change device, and watch mode re-sends it. */
export function fingerprint(): Promise<Fingerprint> {
  if (!cached) {
    cached = compute().catch((err) => {
      // An unexpected failure is not remembered: the next collect() tries again.
      cached = null
      throw err
    })
  }
  return cached
}
