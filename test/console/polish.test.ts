import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createConsoleUser } from '../../src/services/console/console-auth.js'
import { browserAvailable, launchBrowser } from '../helpers/browser.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { CONSOLE_PASSWORD, signInPage } from '../helpers/console.js'

/**
 * Console polish (issue 30, item 15) in Chromium, at 360 px and on a desktop: layout facts (bounding
 * boxes, words that do not break inside, what is visible) and screenshots under test-output/console.
 */
const hasBrowser = browserAvailable()
const OUT = join(
  process.env['VERDICT_TEST_OUTPUT'] ?? join(import.meta.dirname, '..', '..', 'test-output'),
  'console',
)
const WIDTHS = [
  { name: 'narrow', viewport: { width: 360, height: 740 } },
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
] as const

// brokenWords runs in the page (page.evaluate serialises it); the test project has no DOM types.
declare const document: {
  querySelectorAll(s: string): Iterable<unknown>
  createTreeWalker(root: unknown, what: number): { nextNode(): { textContent: string | null } | null }
  createRange(): {
    setStart(n: unknown, i: number): void
    setEnd(n: unknown, i: number): void
    getClientRects(): Iterable<{ width: number; top: number }>
  }
}
declare const NodeFilter: { SHOW_TEXT: number }

/**
 * The words (runs of non-space characters) in the cells of `selector` that the layout broke across
 * lines: each is measured as a range of its text node, whose boxes must all sit on one line.
 */
function brokenWords(selector: string): string[] {
  const bad: string[] = []
  for (const cell of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT)
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of (n.textContent ?? '').matchAll(/\S+/g)) {
        const r = document.createRange()
        r.setStart(n, m.index)
        r.setEnd(n, m.index + m[0].length)
        const lines = new Set(
          [...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)),
        )
        if (lines.size > 1) bad.push(m[0])
      }
    }
  }
  return bad
}

describe.skipIf(!hasBrowser)('console polish in a real browser', () => {
  let h: Harness
  let browser: Browser
  let base: string
  let n = 0

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true })
    h = await build()
    base = await h.app.listen({ port: 0, host: '127.0.0.1' })
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  const score = async (t: TestTenant, payload: Record<string, unknown>) => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { event_id: string; verdict: string; reasons: string[] }
  }

  async function signedIn(
    t: TestTenant,
    viewport: { width: number; height: number },
  ): Promise<{ page: Page; context: BrowserContext }> {
    const email = `polish-${++n}@example.com`
    await createConsoleUser(h.store, h.clock, { tenantId: t.tenantId, email, password: CONSOLE_PASSWORD })
    const context = await browser.newContext({ viewport })
    const page = await context.newPage()
    await signInPage(page, base, email)
    return { page, context }
  }
  const go = async (page: Page, hash: string, heading: string | RegExp) => {
    await page.goto(`${base}/console/#/${hash}`)
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(OUT, `polish-${name}.png`), fullPage: true })

  for (const { name, viewport } of WIDTHS) {
    it(`events table (${name}): times, ids and reason codes never break inside; the reasons column is on screen`, async () => {
      const t = await h.tenant()
      for (let i = 0; i < 3; i++)
        await score(t, {
          event: 'signup',
          user_id: `customer-2026-0001-${i}-with-a-long-account-reference`,
          email: `x${i}@mailinator.com`,
          ip: '8.8.8.8',
          device_id: `fp-polish-${i}`,
        })
      const { page, context } = await signedIn(t, viewport)
      await go(page, 'events', 'Events')
      await page.locator('table tbody tr').first().waitFor()
      expect(await page.evaluate(brokenWords, 'table tbody td')).toEqual([])
      const reasons = await page.getByRole('columnheader', { name: 'Reasons' }).boundingBox()
      expect(reasons).not.toBeNull()
      expect(reasons!.width).toBeGreaterThan(0)
      expect(reasons!.x).toBeGreaterThanOrEqual(0)
      expect(reasons!.x + reasons!.width).toBeLessThanOrEqual(viewport.width)
      // The first reason code of the first row is on screen too, not scrolled out of view.
      const cell = await page.locator('table tbody tr').first().locator('td').last().boundingBox()
      expect(cell!.x + cell!.width).toBeLessThanOrEqual(viewport.width)
      await shot(page, `events-${name}`)
      await context.close()
    })
  }

  it('the event page labels any event (not only queued ones) as fraud or legit', async () => {
    const t = await h.tenant()
    const ev = await score(t, { event: 'login', user_id: 'wrongly-blocked' })
    expect(ev.verdict).toBe('allow')
    const { page, context } = await signedIn(t, WIDTHS[0].viewport)
    await go(page, `events/${ev.event_id}`, 'Event login')
    expect(await page.evaluate(brokenWords, '.summary')).toEqual([])
    await page.getByRole('button', { name: 'Fraud', exact: true }).click()
    await page.locator('.labels .label-fraud').waitFor()
    await page.getByRole('button', { name: 'Legit', exact: true }).click()
    await page.locator('.labels .label-legit').waitFor()
    const stored = await h.app.inject({ url: `/v1/events/${ev.event_id}`, headers: t.headers })
    expect((stored.json().labels as { label: string }[]).map((l) => l.label).sort()).toEqual([
      'fraud',
      'legit',
    ])
    await shot(page, 'event-labels-narrow')
    await context.close()
  })

  it('rule performance shows a dash, not 0 %, for a code no labelled event fired', async () => {
    const t = await h.tenant()
    await score(t, { event: 'signup', user_id: 'dc-user', ip: '8.8.8.8' })
    const labelled = await score(t, { event: 'signup', user_id: 'fraud-user', email: 'f@mailinator.com' })
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: t.headers,
      payload: { label: 'fraud', event_id: labelled.event_id },
    })
    expect(res.statusCode, res.body).toBe(200)
    const { page, context } = await signedIn(t, WIDTHS[1].viewport)
    await go(page, 'rules', 'Rules')
    const row = page.getByRole('row').filter({ hasText: 'datacenter_ip' })
    await row.waitFor()
    const cells = await row.locator('td').allTextContents()
    // Fired, fraud, legit, precision, recall, suggested weight.
    expect(cells.slice(1, 3)).toEqual(['0', '0'])
    expect(cells[3]).toBe('–')
    expect(cells[4]).toBe('–')
    const known = await page
      .getByRole('row')
      .filter({ hasText: 'disposable_email' })
      .locator('td')
      .allTextContents()
    expect(known[4]).toBe('100.0 %')
    await shot(page, 'rules-performance-desktop')
    await context.close()
  })

  it('keys: a rotated key shows as rotated, with its last use', async () => {
    const t = await h.tenant()
    await score(t, { event: 'login', user_id: 'key-user' })
    const used = async () => (await h.store.tenants.listKeys(t.tenantId))[0]?.lastUsedMs
    for (let i = 0; i < 50 && !(await used()); i++) await new Promise((r) => setTimeout(r, 50))
    expect(await used()).toBeTruthy()
    const { page, context } = await signedIn(t, WIDTHS[0].viewport)
    await go(page, 'keys', 'Keys')
    await page.getByRole('button', { name: `Rotate ${t.keyId}` }).click()
    const row = page.getByRole('row').filter({ hasText: t.keyId }).filter({ hasText: 'rotated' })
    await row.waitFor()
    const cells = await row.locator('td').allTextContents()
    expect(cells.join(' | ')).toMatch(/rotated \d{4}-\d\d-\d\d/)
    expect(cells.join(' | ')).not.toMatch(/never/)
    await shot(page, 'keys-rotated-narrow')
    await context.close()
  })

  it("the checker's phone box takes a country for a national number", async () => {
    const t = await h.tenant()
    const { page, context } = await signedIn(t, WIDTHS[0].viewport)
    await go(page, 'checker', 'Checker')
    const bodies: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/check/phone')) bodies.push(r.postData() ?? '')
    })
    const form = page.getByRole('form', { name: 'Check Phone' })
    await form.getByLabel('Phone', { exact: true }).fill('020 7946 0018')
    await form.getByLabel(/Country/).fill('gb')
    await form.getByRole('button', { name: 'Check phone' }).click()
    await form.locator('.result').waitFor()
    expect(bodies.map((b) => JSON.parse(b))).toEqual([{ phone: '020 7946 0018', country: 'GB' }])
    expect(await form.locator('.result').textContent()).toContain('GB')
    await shot(page, 'checker-phone-narrow')
    await context.close()
  })

  it('GET / leads to the console, which has a favicon; /docs is verdict’s and reads /v1/openapi.json', async () => {
    const root = await fetch(`${base}/`, { redirect: 'manual' })
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/console/')
    const icon = await fetch(`${base}/favicon.ico`)
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/)

    const context = await browser.newContext({ viewport: WIDTHS[1].viewport })
    const page = await context.newPage()
    await page.goto(`${base}/`)
    expect(new URL(page.url()).pathname).toBe('/console/')
    const href = await page.locator('link[rel="icon"]').getAttribute('href')
    expect(href).toBeTruthy()
    const linked = await fetch(new URL(href!, base))
    expect(linked.status).toBe(200)
    expect(linked.headers.get('content-type')).toMatch(/^image\//)

    const requested: string[] = []
    page.on('request', (r) => requested.push(new URL(r.url()).pathname))
    await page.goto(`${base}/docs`)
    await page.locator('.information-container .title').filter({ hasText: 'verdict' }).waitFor()
    expect(await page.title()).toMatch(/verdict/)
    expect(requested).toContain('/v1/openapi.json')
    expect(requested).not.toContain('/docs/json')
    await page.screenshot({ path: join(OUT, 'polish-docs-desktop.png') })
    await context.close()
  })
})
