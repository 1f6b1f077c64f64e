import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startVerdictBackend, type VerdictBackend } from '../helpers/beacon-backend.js'
import {
  browserAvailable,
  launchBrowser,
  openPage,
  type Site,
  setVisibility,
  startSite,
  waitUntil,
} from '../helpers/browser.js'
import { classicPage } from './pages.js'

const hasBrowser = browserAvailable()
const INTERVAL = 300

/** The beacon count once it stayed the same for a whole interval. */
async function settled(page: Page, count: () => number): Promise<number> {
  for (;;) {
    const n = count()
    await page.waitForTimeout(INTERVAL)
    if (count() === n) return n
  }
}

describe.skipIf(!hasBrowser)('beacon: watch mode in a real browser', () => {
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

  it('re-beacons at the interval while visible, stops while hidden, resumes, stops for good; the beacons join the device timeline', async () => {
    const { context, page } = await openPage(browser, site.url('/'))
    await page.waitForFunction(`typeof window.Verdict === 'object'`)
    const count = () => backend.beacons.length
    const start = count()
    await page.evaluate(
      `window.stopWatch = Verdict.watch({ key: ${JSON.stringify(backend.key)}, interval: ${INTERVAL}, onBeacon: (r) => { window.lastVisit = r.visit_id } })`,
    )
    await waitUntil(count, (n) => n >= start + 3, 'three watch beacons')
    const ids = new Set(backend.beacons.slice(start).map((b) => (b.body as { device_id: string }).device_id))
    expect(ids.size).toBe(1)
    // Each beacon after the first names the first one's visit: the watch's session.
    const sent = backend.beacons.slice(start).map((b) => b.body as { watch_of?: string })
    expect(sent[0]?.watch_of).toBeUndefined()
    expect(new Set(sent.slice(1).map((b) => b.watch_of)).size).toBe(1)
    expect(sent[1]?.watch_of).toMatch(/^vis_/)
    expect(await page.evaluate('window.lastVisit')).toMatch(/^vis_/)

    await setVisibility(page, 'hidden')
    // A beacon already in flight when the page hid may still land: settle, then watch several intervals pass.
    const whileHidden = await settled(page, count)
    await page.waitForTimeout(INTERVAL * 4)
    expect(count()).toBe(whileHidden)

    await setVisibility(page, 'visible')
    await waitUntil(count, (n) => n >= whileHidden + 2, 'watch beacons after the page is visible again')

    await page.evaluate('window.stopWatch()')
    const lastVisit = (await page.evaluate('window.lastVisit')) as string
    const stopped = await settled(page, count)
    await page.waitForTimeout(INTERVAL * 4)
    expect(count()).toBe(stopped)
    console.log(`watch mode: ${count() - start} beacons at a ${INTERVAL} ms interval`)
    await context.close()

    // The watch beacons are points of the device's timeline: the browser beaconed from this machine's
    // loopback address (a residential class), so the shop's next score of that device_id from a
    // datacenter address is a switch within the session.
    const deviceId = [...ids][0]!
    const rows = await backend.store.db.all<{ connection_type: string | null }>(
      'SELECT connection_type FROM beacon_observations WHERE device_id = ?',
      [deviceId],
    )
    expect(rows.length).toBeGreaterThanOrEqual(3)
    expect(new Set(rows.map((r) => r.connection_type))).toEqual(new Set(['residential']))
    const scored = await backend.score({
      event: 'checkout',
      device_id: deviceId,
      ip: '8.8.8.8',
      visit_id: lastVisit,
    })
    expect(scored.reasons).toContain('ip_cloaking')
    // Without the page's visit id, the beacons are nobody's timeline (issue 26: forged beacons).
    const unbound = await backend.score({ event: 'checkout', device_id: deviceId, ip: '8.8.4.4' })
    expect(unbound.reasons).not.toContain('ip_cloaking')
    const control = await backend.score({ event: 'checkout', device_id: 'ab'.repeat(32), ip: '8.8.8.8' })
    expect(control.reasons).not.toContain('ip_cloaking')
  })

  it('on a network slower than the interval, waits for the first beacon so every later one names its visit', async () => {
    const { context, page } = await openPage(browser, site.url('/'))
    await page.waitForFunction(`typeof window.Verdict === 'object'`)
    // The page's fetch answers the first beacon three intervals late and notes what each beacon sent.
    // Before, the library sent the second beacon meanwhile without the first one's visit, which split
    // the watch into two sessions.
    await page.evaluate(`{
      window.sent = []
      const realFetch = window.fetch
      window.fetch = async (url, init) => {
        window.sent.push(JSON.parse(init.body).watch_of ?? null)
        if (window.sent.length === 1) await new Promise((r) => setTimeout(r, ${INTERVAL * 3}))
        return realFetch(url, init)
      }
    }`)
    await page.evaluate(
      `window.stopWatch = Verdict.watch({ key: ${JSON.stringify(backend.key)}, interval: ${INTERVAL} })`,
    )
    const sentCount = async () => ((await page.evaluate('window.sent')) as unknown[]).length
    for (let n = await sentCount(); n < 4; n = await sentCount()) await page.waitForTimeout(INTERVAL)
    await page.evaluate('window.stopWatch()')
    const sent = (await page.evaluate('window.sent')) as (string | null)[]
    expect(sent[0]).toBeNull()
    expect(sent.slice(1).every((w) => typeof w === 'string' && w.startsWith('vis_'))).toBe(true)
    expect(new Set(sent.slice(1)).size).toBe(1)
    await context.close()
  })
})
