import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BeaconBackend, startVerdictBackend } from '../helpers/beacon-backend.js'
import { browserAvailable, launchBrowser, type Site, startSite } from '../helpers/browser.js'
import { classicPage, collectIn, INIT } from './pages.js'

const hasBrowser = browserAvailable()

const WINDOWS_CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'
const LINUX_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0'

describe.skipIf(!hasBrowser)('beacon: integrity checks in a real browser', () => {
  let browser: Browser
  let backend: BeaconBackend
  let site: Site

  beforeAll(async () => {
    backend = await startVerdictBackend()
    site = await startSite({ '/': classicPage(backend) })
    await backend.allowOrigin(site.origin)
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await backend?.close()
  })

  /** Collects on a fresh profile after `init` ran in the page (before the beacon script). */
  async function collectWith(init?: string, options: Parameters<Browser['newContext']>[0] = {}) {
    const context = await browser.newContext(options)
    if (init) await context.addInitScript(init)
    const page = await context.newPage()
    await page.goto(site.url('/'))
    const { r } = await collectIn(page, backend.key)
    await context.close()
    return r
  }

  it('flags an overridden HTMLCanvasElement.prototype.toDataURL as tampered', async () => {
    const r = await collectWith(INIT.tamperToDataURL)
    expect(r.is_tampered).toBe(true)
    // The override returns the real image: no noise, one antidetect signal, low confidence.
    expect(r.is_noise_injected).toBe(false)
    expect(r).toMatchObject({ antidetect_score: 30, antidetect_confidence: 'low' })
  })

  it('flags random canvas noise, and keeps the id stable despite it', async () => {
    const first = await collectWith(INIT.canvasNoise)
    const second = await collectWith(INIT.canvasNoise)
    expect(first.is_noise_injected).toBe(true)
    expect(first.is_tampered).toBe(true)
    expect(first.antidetect_score).toBe(65)
    expect(first.antidetect_confidence).toBe('medium')
    expect(second.device_id).toBe(first.device_id)
  })

  it('flags a Windows user agent on Linux: UA vs platform, and the OS the fonts reveal', async () => {
    const r = await collectWith(undefined, { userAgent: WINDOWS_CHROME })
    console.log('windows UA on linux:', JSON.stringify(r))
    expect(r.ua_consistent).toBe(false)
    expect(r.is_os_mismatch).toBe(true)
    expect(r.is_engine_mismatch).toBe(false)
  })

  it('flags a Firefox user agent on a V8 engine as an engine mismatch', async () => {
    const r = await collectWith(undefined, { userAgent: LINUX_FIREFOX })
    console.log('firefox UA on chromium:', JSON.stringify(r))
    expect(r.is_engine_mismatch).toBe(true)
    expect(r.is_os_mismatch).toBe(false)
  })

  it('flags a navigator patched in the page only as a context mismatch', async () => {
    const r = await collectWith(
      `Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { configurable: true, get: function hardwareConcurrency() { return 64 } })`,
    )
    expect(r.is_context_mismatch).toBe(true)
    expect(r.is_tampered).toBe(true)
  })
})
