import type { Page } from 'playwright-core'
import type { BeaconDevice } from '../../src/beacon/contract.js'
import type { BeaconBackend } from '../helpers/beacon-backend.js'

/** A shop page that loads the classic script from the backend. */
export const classicPage = (b: BeaconBackend) =>
  `<!doctype html><html><head><meta charset="utf-8"><script src="${b.scriptUrl}"></script></head><body><p>shop</p></body></html>`

/** A shop page that imports the ES module and exposes it as window.VerdictModule. */
export const modulePage = (b: BeaconBackend) =>
  `<!doctype html><html><head><meta charset="utf-8"><script type="module">import Verdict from '${b.moduleUrl}'; window.VerdictModule = Verdict</script></head><body><p>shop</p></body></html>`

export type Collected = BeaconDevice & { device_id: string; visit_id: string }

/** Runs Verdict.collect in the page; `ms` is the wall time of the call in the page (beacon round trip included). */
export async function collectIn(
  page: Page,
  key: string,
  global = 'Verdict',
): Promise<{ r: Collected; ms: number }> {
  await page.waitForFunction(`typeof window.${global} === 'object'`)
  return page.evaluate(`(async () => {
    const t0 = performance.now()
    const r = await window.${global}.collect({ key: ${JSON.stringify(key)} })
    return { r, ms: performance.now() - t0 }
  })()`)
}

/** Page scripts run before the beacon (page.addInitScript): what antidetect tools and stealth plugins do. */
export const INIT = {
  /** Replaces toDataURL with a JS function (returns the real image, so only the override itself shows). */
  tamperToDataURL: `(() => {
    const real = HTMLCanvasElement.prototype.toDataURL
    HTMLCanvasElement.prototype.toDataURL = function (...args) { return real.apply(this, args) }
  })()`,
  /** Random per-readback noise on getImageData and toDataURL, the way noise-injecting extensions work. */
  canvasNoise: `(() => {
    const getImageData = CanvasRenderingContext2D.prototype.getImageData
    const noisy = function (...args) {
      const img = getImageData.apply(this, args)
      for (let i = 0; i < img.data.length; i += 4) img.data[i] = img.data[i] ^ (Math.random() < 0.1 ? 1 : 0)
      return img
    }
    CanvasRenderingContext2D.prototype.getImageData = noisy
    const toDataURL = HTMLCanvasElement.prototype.toDataURL
    HTMLCanvasElement.prototype.toDataURL = function (...args) {
      const ctx = this.getContext('2d')
      if (ctx && this.width && this.height) {
        const img = noisy.call(ctx, 0, 0, this.width, this.height)
        const copy = document.createElement('canvas')
        copy.width = this.width
        copy.height = this.height
        copy.getContext('2d').putImageData(img, 0, 0)
        return toDataURL.apply(copy, args)
      }
      return toDataURL.apply(this, args)
    }
  })()`,
  /** Plain http on a non-localhost host has no crypto.subtle: the pure-JS hash must give the same id. */
  noSubtle: `Object.defineProperty(Crypto.prototype, 'subtle', { configurable: true, get: () => undefined })`,
}
