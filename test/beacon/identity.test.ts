import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_BODY_KEYS, BEACON_DEVICE_KEYS, DEVICE_ID_PATTERN } from '../../src/beacon/contract.js'
import { startVerdictBackend, type VerdictBackend } from '../helpers/beacon-backend.js'
import { browserAvailable, launchBrowser, openPage, type Site, startSite } from '../helpers/browser.js'
import { classicPage, collectIn, INIT, modulePage } from './pages.js'

const hasBrowser = browserAvailable()

describe.skipIf(!hasBrowser)('beacon: device identity in a real browser', () => {
  let browser: Browser
  let backend: VerdictBackend
  let site: Site

  beforeAll(async () => {
    backend = await startVerdictBackend()
    site = await startSite({
      '/': classicPage(backend),
      '/module': modulePage(backend),
      // A CSP that refuses blob: workers: no worker runs, the page measures the fonts itself.
      '/no-worker': classicPage(backend).replace(
        '<head>',
        `<head><meta http-equiv="Content-Security-Policy" content="worker-src 'none'">`,
      ),
    })
    await backend.allowOrigin(site.origin)
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await backend?.close()
  })

  it('keeps one device_id across reloads and a new tab of the same profile', async () => {
    const { context, page } = await openPage(browser, site.url('/'))
    const first = await collectIn(page, backend.key)
    // The fingerprint is computed once per page: a second call costs only the loopback POST.
    const postOnly = (await collectIn(page, backend.key)).ms
    expect(first.r.device_id).toMatch(DEVICE_ID_PATTERN)
    expect(first.r.visit_id).toMatch(/^vis_/)
    const times = [first.ms]
    for (let i = 0; i < 2; i++) {
      await page.reload()
      const again = await collectIn(page, backend.key)
      expect(again.r.device_id).toBe(first.r.device_id)
      expect(again.r.visit_id).not.toBe(first.r.visit_id)
      times.push(again.ms)
    }
    const tab = await context.newPage()
    await tab.goto(site.url('/'))
    const other = await collectIn(tab, backend.key)
    expect(other.r.device_id).toBe(first.r.device_id)
    times.push(other.ms)
    console.log(
      `beacon collect() in headless chromium, ms per page load (incl. loopback POST): ${times.map((t) => t.toFixed(1)).join(', ')}; POST alone: ${postOnly.toFixed(1)}`,
    )
    await context.close()
  })

  it('gives another id to a profile with other fingerprint-relevant settings', async () => {
    const base = await openPage(browser, site.url('/'))
    const baseId = (await collectIn(base.page, backend.key)).r.device_id
    await base.context.close()
    for (const options of [
      { screen: { width: 1920, height: 1080 } },
      { deviceScaleFactor: 2 },
      { timezoneId: 'Asia/Tokyo' },
      { locale: 'de-DE' },
    ]) {
      const { context, page } = await openPage(browser, site.url('/'), options)
      const { r } = await collectIn(page, backend.key)
      expect(r.device_id, JSON.stringify(options)).toMatch(DEVICE_ID_PATTERN)
      expect(r.device_id, JSON.stringify(options)).not.toBe(baseId)
      await context.close()
    }
  })

  it('flags headless Chromium as headless and its software GPU as emulated, and nothing else', async () => {
    const { context, page } = await openPage(browser, site.url('/'))
    const { r } = await collectIn(page, backend.key)
    expect(r).toMatchObject({
      is_headless: true,
      is_emulated: true,
      ua_consistent: true,
      is_noise_injected: false,
      is_tampered: false,
      is_context_mismatch: false,
      is_engine_mismatch: false,
      is_os_mismatch: false,
      antidetect_score: 0,
      antidetect_confidence: 'low',
    })
    await context.close()
  })

  it('sends only the hash and the integrity results, with the publishable key', async () => {
    const before = backend.beacons.length
    const preflights = backend.preflights
    const { context, page } = await openPage(browser, site.url('/'))
    const { r } = await collectIn(page, backend.key)
    // A CORS simple request (text/plain, key in the body): no preflight round trip before the POST.
    expect(backend.preflights).toBe(preflights)
    const sent = backend.beacons.slice(before)
    expect(sent).toHaveLength(1)
    const { body, key, origin } = sent[0]!
    expect(key).toBe(backend.key)
    expect(origin).toBe(site.origin)
    const b = body as Record<string, unknown>
    expect(Object.keys(b).sort()).toEqual([...BEACON_BODY_KEYS].sort())
    expect(Object.keys(b['device'] as object).sort()).toEqual([...BEACON_DEVICE_KEYS].sort())
    expect(b['device_id']).toBe(r.device_id)
    for (const [k, v] of Object.entries(b['device'] as object)) {
      if (k === 'antidetect_score') expect(Number.isInteger(v)).toBe(true)
      else if (k === 'antidetect_confidence') expect(['low', 'medium', 'high']).toContain(v)
      else expect(typeof v, k).toBe('boolean')
    }
    await context.close()
  })

  it('ES module build: beacons to the origin it was imported from, with the same id', async () => {
    const classic = await openPage(browser, site.url('/'))
    const classicId = (await collectIn(classic.page, backend.key)).r.device_id
    await classic.context.close()
    const before = backend.beacons.length
    const { context, page } = await openPage(browser, site.url('/module'))
    const { r } = await collectIn(page, backend.key, 'VerdictModule')
    expect(r.device_id).toBe(classicId)
    expect(backend.beacons.length).toBe(before + 1)
    await context.close()
  })

  it('without crypto.subtle, the pure-JS SHA-256 gives the same id', async () => {
    const classic = await openPage(browser, site.url('/'))
    const id = (await collectIn(classic.page, backend.key)).r.device_id
    await classic.context.close()
    const context = await browser.newContext()
    await context.addInitScript(INIT.noSubtle)
    const page = await context.newPage()
    await page.goto(site.url('/'))
    expect(await page.evaluate('typeof crypto.subtle')).toBe('undefined')
    expect((await collectIn(page, backend.key)).r.device_id).toBe(id)
    await context.close()
  })

  it('without a worker (refused by the page CSP), the page measures the fonts: same id, no mismatch', async () => {
    const plain = await openPage(browser, site.url('/'))
    const id = (await collectIn(plain.page, backend.key)).r.device_id
    await plain.context.close()
    const context = await browser.newContext()
    await context.addInitScript(
      `document.addEventListener('securitypolicyviolation', (e) => { window.__refused = e.effectiveDirective })`,
    )
    const page = await context.newPage()
    await page.goto(site.url('/no-worker'))
    const { r } = await collectIn(page, backend.key)
    expect(await page.evaluate('window.__refused')).toBe('worker-src')
    expect(r.device_id).toBe(id)
    expect(r.is_context_mismatch).toBe(false)
    await context.close()
  })

  it('refuses a key that is not publishable before sending anything', async () => {
    const before = backend.beacons.length
    const { context, page } = await openPage(browser, site.url('/'))
    await page.waitForFunction(`typeof window.Verdict === 'object'`)
    const message = await page.evaluate(
      `Verdict.collect({ key: 'sk_secret' }).then(() => 'sent', (e) => e.message)`,
    )
    expect(message).toMatch(/publishable/)
    expect(backend.beacons.length).toBe(before)
    await context.close()
  })
  it('is refused (403) from a page origin the key does not list, and records nothing', async () => {
    const other = await startSite({ '/': classicPage(backend) })
    try {
      const before = backend.beacons.length
      const { context, page } = await openPage(browser, other.url('/'))
      await page.waitForFunction(`typeof window.Verdict === 'object'`)
      const message = await page.evaluate(
        `Verdict.collect({ key: ${JSON.stringify(backend.key)} }).then(() => 'sent', (e) => e.message)`,
      )
      expect(message).toMatch(/403/)
      expect(backend.beacons.length).toBe(before)
      await context.close()
    } finally {
      await other.close()
    }
  })
})
