import { within } from '../util.js'

type OfflineCtor = new (channels: number, length: number, rate: number) => OfflineAudioContext

/** Offline audio rendering of an oscillator through a compressor: the float output differs by platform and build. */
export async function probeAudio(): Promise<string> {
  const w = window as unknown as {
    OfflineAudioContext?: OfflineCtor
    webkitOfflineAudioContext?: OfflineCtor
  }
  const Ctor = w.OfflineAudioContext || w.webkitOfflineAudioContext
  if (!Ctor) return 'none'
  const ctx = new Ctor(1, 5000, 44100)
  const osc = ctx.createOscillator()
  osc.type = 'triangle'
  osc.frequency.value = 10000
  const comp = ctx.createDynamicsCompressor()
  comp.threshold.value = -50
  comp.knee.value = 40
  comp.ratio.value = 12
  comp.attack.value = 0
  comp.release.value = 0.25
  osc.connect(comp)
  comp.connect(ctx.destination)
  osc.start(0)
  // Old WebKit resolves only through oncomplete; some browsers never render in a background tab.
  const rendered = new Promise<AudioBuffer>((resolve, reject) => {
    ctx.oncomplete = (e) => resolve(e.renderedBuffer)
    const p = ctx.startRendering() as Promise<AudioBuffer> | undefined
    p?.then(resolve, reject)
  })
  const buffer = await within<AudioBuffer | null>(rendered, 1000, null)
  if (!buffer) return 'timeout'
  const data = buffer.getChannelData(0)
  let sum = 0
  for (let i = 4500; i < 5000; i++) sum += Math.abs(data[i]!)
  return String(sum)
}
