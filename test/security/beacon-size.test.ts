import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { BEACON_BODY_LIMIT } from '../../src/plugins/json-body.js'
import { classicPage, collectIn, INIT } from '../beacon/pages.js'
import { startVerdictBackend, type VerdictBackend } from '../helpers/beacon-backend.js'
import { browserAvailable, launchBrowser, openPage, type Site, startSite } from '../helpers/browser.js'

/**
 * Issue 26, item 1: the beacon's small body limit against the bodies the browser library really sends,
 * in a real browser, clean and tampered, and against the longest body its contract allows.
 */
describe.skipIf(!browserAvailable())('beacon body size', () => {
  let browser: Browser
  let backend: VerdictBackend
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

  it('the largest real beacon body is a small fraction of the limit', async () => {
    const sizes: number[] = []
    for (const init of [undefined, INIT.canvasNoise, INIT.tamperToDataURL]) {
      const { context, page } = await openPage(browser, site.url('/'))
      if (init) await page.addInitScript(init)
      await page.reload()
      await collectIn(page, backend.key)
      await context.close()
    }
    // The library sends JSON.stringify of its body; the backend keeps what it parsed, in the same order.
    for (const b of backend.beacons) sizes.push(Buffer.byteLength(JSON.stringify(b.body)))
    expect(sizes.length).toBeGreaterThanOrEqual(3)
    // The longest body the contract allows with this key: every flag false, the longest values.
    const device = Object.fromEntries(BEACON_FLAGS.map((f) => [f, false]))
    const longest = Buffer.byteLength(
      JSON.stringify({
        key: backend.key,
        device_id: 'f'.repeat(64),
        device: { ...device, antidetect_score: 100, antidetect_confidence: 'medium' },
      }),
    )
    console.log(
      `beacon bodies (bytes): real ${sizes.join(', ')}; longest allowed ${longest}; limit ${BEACON_BODY_LIMIT}`,
    )
    expect(Math.max(...sizes)).toBeLessThanOrEqual(longest)
    expect(longest * 8).toBeLessThan(BEACON_BODY_LIMIT)
  })
})
