import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createConsoleUser, SESSION_IDLE_MS } from '../../src/services/console/console-auth.js'
import { browserAvailable, launchBrowser } from '../helpers/browser.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { CONSOLE_PASSWORD, signInPage } from '../helpers/console.js'

/**
 * The console in Debian's Chromium against the real app on a loopback port. Each flow signs in as a
 * user of its own tenant, and saves a screenshot under test-output/console (VERDICT_TEST_OUTPUT).
 */
const hasBrowser = browserAvailable()
const OUT = join(
  process.env['VERDICT_TEST_OUTPUT'] ?? join(import.meta.dirname, '..', '..', 'test-output'),
  'console',
)
const AXE = join(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js')
/**
 * Polls an expression in the page. Not waitForFunction: that evaluates its string inside the page, which
 * the console's CSP (no unsafe-eval) refuses; page.evaluate goes through the DevTools protocol instead.
 */
async function until(page: Page, expression: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await page.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expression}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const PAGES = ['overview', 'events', 'review', 'checker', 'lists', 'rules', 'keys', 'webhooks', 'privacy']

describe.skipIf(!hasBrowser)('console in a real browser', () => {
  let h: Harness
  let browser: Browser
  let base: string
  const cspViolations: string[] = []
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
    return res.json() as { event_id: string; verdict: string; checks: unknown[] }
  }

  /** A tenant with one console user, signed in on a fresh page (360 px wide when `narrow`). */
  async function signedIn(
    narrow = false,
    prepare: (t: TestTenant) => Promise<void> = async () => {},
  ): Promise<{ t: TestTenant; page: Page; context: BrowserContext }> {
    const t = await h.tenant()
    await prepare(t)
    const email = `flow-${++n}@example.com`
    await createConsoleUser(h.store, h.clock, { tenantId: t.tenantId, email, password: CONSOLE_PASSWORD })
    const context = await browser.newContext(narrow ? { viewport: { width: 360, height: 740 } } : {})
    const page = await context.newPage()
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text())
    })
    await signInPage(page, base, email)
    return { t, page, context }
  }

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true })
  const go = async (page: Page, hash: string, heading: string | RegExp) => {
    await page.goto(`${base}/console/#/${hash}`)
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  }

  it('signs in and shows the overview', async () => {
    const { page, context } = await signedIn(false, async (t) => {
      await score(t, { event: 'login', user_id: 'overview-user' })
    })
    // The quota tile is shown and counts the one scored event (a locator itself is always truthy).
    const quota = page.locator('.tile', { hasText: /of the monthly\s+quota/ })
    await quota.waitFor({ timeout: 10_000 })
    expect(await quota.textContent()).toMatch(/of the monthly\s+quota \(1 \/ \d+, /)
    await page.locator('svg.chart').waitFor()
    await shot(page, 'sign-in-overview')
    await context.close()
  })

  it('shows a scored event in Events, with its checks on its page', async () => {
    const { t, page, context } = await signedIn()
    const ev = await score(t, {
      event: 'signup',
      user_id: 'browser-user',
      email: 'x@mailinator.com',
      ip: '8.8.8.8',
      device_id: 'fp-browser-1',
    })
    expect(ev.checks.length).toBeGreaterThan(0)
    await go(page, 'events', 'Events')
    const row = page.getByRole('row').filter({ hasText: 'browser-user' })
    await row.waitFor()
    await row.getByRole('link').click()
    await page.getByRole('heading', { name: 'Event signup', level: 1 }).waitFor()
    expect(await page.locator('tr.check').count()).toBe(ev.checks.length)
    await expect(page.getByText(ev.event_id).count()).resolves.toBeGreaterThan(0)
    await page.locator('.device-profile').getByText('Accounts').waitFor()
    await shot(page, 'event-page')
    await context.close()
  })

  it('labels an event from the review queue and shows the label on its page', async () => {
    const { t, page, context } = await signedIn()
    await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { thresholds: { review: 0 } },
    })
    const ev = await score(t, { event: 'checkout', user_id: 'to-review' })
    expect(ev.verdict).toBe('review')
    await go(page, 'review', 'Review queue')
    await page.getByRole('heading', { name: /checkout/ }).waitFor()
    await page.getByLabel('Note (optional)').fill('called the customer')
    await page.getByRole('button', { name: 'Fraud' }).click()
    await page.getByText('Nothing to review.').waitFor()
    await shot(page, 'review-queue')
    await go(page, `events/${ev.event_id}`, 'Event checkout')
    await page.locator('.labels').getByText('fraud').waitFor()
    await page.getByText(/called the customer/).waitFor()
    await shot(page, 'review-label-on-event')
    await context.close()
  })

  it('labels with the keyboard: L marks the current event legit and the queue moves on', async () => {
    const { t, page, context } = await signedIn()
    await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { thresholds: { review: 0 } },
    })
    await score(t, { event: 'first' })
    h.clock.advance(1000)
    await score(t, { event: 'second' })
    await go(page, 'review', 'Review queue')
    await page.getByRole('heading', { name: /^first/ }).waitFor()
    await page.keyboard.press('l')
    await page.getByRole('heading', { name: /^second/ }).waitFor()
    await context.close()
  })

  it('changes a weight, shows the what-if counts, saves and lists a new config version', async () => {
    const { t, page, context } = await signedIn()
    for (let i = 0; i < 3; i++)
      await score(t, { event: 'signup', email: `u${i}@mailinator.com`, ip: '8.8.8.8' })
    await go(page, 'rules', 'Rules')
    const versionsBefore = await page.locator('ol.versions > li').count()
    const first = page.locator('input[id^="weights-"]').first()
    await first.fill('100')
    await page.getByRole('button', { name: 'Preview what-if' }).click()
    await page
      .locator('.whatif-summary')
      .getByText(/of 3 recent events/)
      .waitFor()
    await shot(page, 'rules-what-if')
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await page.getByText('Saved.', { exact: false }).waitFor()
    await until(page, `document.querySelectorAll('ol.versions > li').length > ${versionsBefore}`)
    await shot(page, 'rules-saved-version')
    await context.close()
  })

  it('saves a weight only after its what-if, as the new overrides', async () => {
    const { t, page, context } = await signedIn()
    await go(page, 'rules', 'Rules')
    await page.locator('#weights-disposableEmail, input[id^="weights-"]').first().fill('55')
    expect(await page.getByRole('button', { name: 'Save configuration' }).isDisabled()).toBe(true)
    await page.getByRole('button', { name: 'Preview what-if' }).click()
    await page.locator('.whatif-summary').waitFor()
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await page.getByText('Saved.', { exact: false }).waitFor()
    const config = await h.app.inject({ url: '/v1/config', headers: t.headers })
    expect(Object.values(config.json().overrides.weights)).toContain(55)
    await shot(page, 'rules')
    await context.close()
  })

  it('creates a custom rule in shadow, previews how often it fires, saves it, then promotes it', async () => {
    const { t, page, context } = await signedIn()
    for (let i = 0; i < 4; i++)
      await score(t, {
        event: i < 3 ? 'checkout' : 'login',
        user_id: `cr-${i}`,
        attributes: { amount: 100 * (i + 1) },
      })
    await go(page, 'rules', 'Rules')
    await page.getByText('No rules yet.', { exact: false }).waitFor()
    await page.getByRole('button', { name: 'Add a rule' }).click()
    await page.getByLabel('Rule id').fill('big_checkout')
    await page.getByLabel('Condition (CEL)').fill("event.name == 'checkout' && event.attributes.amount > 150")
    await page.getByLabel('Points').fill('30')
    expect(await page.getByLabel('Mode').inputValue()).toBe('shadow')
    await page.getByRole('button', { name: 'Keep this rule' }).click()
    await page.getByText('Draft (not saved)').waitFor()
    await page.getByRole('button', { name: 'Preview rules' }).click()
    // Checkouts of 200 and 300 out of the four events.
    await page.locator('tr[data-rule="big_checkout"]').getByText('2 of 4').waitFor()
    await shot(page, 'rules-custom-preview')
    await page.getByRole('button', { name: 'Save rules' }).click()
    await page.getByText('Rules saved.', { exact: false }).waitFor()
    const saved = (await h.app.inject({ url: '/v1/config', headers: t.headers })).json().overrides.rules
    expect(saved).toEqual([
      {
        id: 'big_checkout',
        when: "event.name == 'checkout' && event.attributes.amount > 150",
        then: { score: 30 },
        mode: 'shadow',
        rollout: 100,
      },
    ])
    // Shadow: recorded, never decides.
    const shadowed = await score(t, { event: 'checkout', user_id: 'cr-9', attributes: { amount: 900 } })
    expect(JSON.stringify(shadowed.checks)).not.toContain('rule:big_checkout')

    await page.getByRole('button', { name: 'Promote big_checkout to enforce' }).click()
    await page.getByRole('button', { name: 'Save rules' }).click()
    await page.getByText('Rules saved.', { exact: false }).waitFor()
    await page.locator('tr[data-rule="big_checkout"]').getByText('enforce').waitFor()
    const promoted = (await h.app.inject({ url: '/v1/config', headers: t.headers })).json().overrides.rules
    expect(promoted[0].mode).toBe('enforce')
    const enforced = await score(t, { event: 'checkout', user_id: 'cr-10', attributes: { amount: 900 } })
    expect(JSON.stringify(enforced.checks)).toContain('rule:big_checkout')
    await context.close()
  })

  it('shows a refused rule condition at the rule, with the position the server names, and saves nothing', async () => {
    const { t, page, context } = await signedIn()
    await go(page, 'rules', 'Rules')
    await page.getByRole('button', { name: 'Add a rule' }).click()
    await page.getByLabel('Rule id').fill('typo_rule')
    await page.getByLabel('Condition (CEL)').fill("event.name == 'checkout' && evnt.attributes.amount > 1")
    await page.getByRole('button', { name: 'Keep this rule' }).click()
    await page.getByRole('button', { name: 'Save rules' }).click()
    const refused = page.locator('tr.refused[data-rule="typo_rule"]')
    await refused.waitFor()
    expect(await refused.getByRole('alert').textContent()).toMatch(/rules\[0\] \(typo_rule\).*position \d+/)
    await shot(page, 'rules-custom-refused')
    const config = (await h.app.inject({ url: '/v1/config', headers: t.headers })).json()
    expect(config.overrides.rules ?? []).toEqual([])
    await context.close()
  })

  it('adds a block-list entry that blocks the next score', async () => {
    const { t, page, context } = await signedIn()
    await go(page, 'lists', 'Lists')
    await page.getByLabel('List', { exact: true }).fill('block')
    await page.getByLabel('Type', { exact: true }).selectOption('user')
    await page.getByLabel('Value', { exact: true }).fill('mallory')
    await page.getByRole('button', { name: 'Add entry' }).click()
    await page.getByRole('row').filter({ hasText: 'mallory' }).waitFor()
    await shot(page, 'lists-added')
    expect((await score(t, { event: 'login', user_id: 'mallory' })).verdict).toBe('block')
    expect((await score(t, { event: 'login', user_id: 'alice' })).verdict).not.toBe('block')
    await context.close()
  })

  it('imports a CSV with a per-row error report', async () => {
    const { t, page, context } = await signedIn()
    await go(page, 'lists', 'Lists')
    const csv =
      'list,type,value,note\nblock,user,u-1,\nblock,colour,red,\nallow,email,ok@example.com,\nblock,ip,not-an-ip,\n' +
      'office_net,ip,203.0.113.0/24,"HQ, floor 2"\n'
    await page
      .locator('#csv')
      .setInputFiles({ name: 'rows.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
    await page.getByText(/Imported 3 entries; 2 rows refused/).waitFor()
    const report = page.getByRole('table', { name: 'Rows not imported' })
    await expect(report.getByRole('row').count()).resolves.toBe(3)
    const ranges = await h.app.inject({ url: '/v1/lists?list=office_net', headers: t.headers })
    expect(ranges.json().entries).toEqual([
      expect.objectContaining({ type: 'ip', hint: '203.0.113.0/24', note: 'HQ, floor 2' }),
    ])
    await shot(page, 'lists-import')
    await context.close()
  })

  it('greets a first visit without a notice; a wrong password shows only its own error', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${base}/console/`)
    await page.getByRole('heading', { name: 'Sign in to verdict' }).waitFor()
    // The session probe's 401 means "no session yet", not "your session ended".
    await expect(page.locator('.notice').count()).resolves.toBe(0)
    await page.getByLabel('Email').fill('nobody@example.com')
    await page.getByLabel('Password').fill('not-the-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').waitFor()
    await expect(page.locator('.notice').count()).resolves.toBe(0)
    expect(await page.content()).not.toContain('session has ended')
    await context.close()
  })

  it('returns to sign-in when the session has expired', async () => {
    const { page, context } = await signedIn()
    h.clock.advance(SESSION_IDLE_MS + 1000)
    await page.getByRole('link', { name: 'Events' }).click()
    await page.getByRole('heading', { name: 'Sign in to verdict' }).waitFor()
    await page.getByText('Your session has ended').waitFor()
    await shot(page, 'session-expired')
    await context.close()
  })

  it("answers not found for another tenant's event id", async () => {
    const other = await h.tenant()
    const foreign = await score(other, { event: 'secret-event', user_id: 'someone-else' })
    const { page, context } = await signedIn()
    await go(page, `events/${foreign.event_id}`, 'Event not found')
    expect(await page.content()).not.toContain('someone-else')
    await shot(page, 'foreign-event-not-found')
    await context.close()
  })

  it('creates a secret key shown once that works, rotates it and revokes the new one', async () => {
    const { page, context } = await signedIn()
    await go(page, 'keys', 'Keys')
    await page.getByRole('button', { name: 'Create secret key' }).click()
    const shown = page.getByLabel('API key', { exact: true })
    await shown.waitFor()
    const key = await shown.inputValue()
    expect(key).toMatch(/^vk_/)
    expect((await h.app.inject({ url: '/v1/config', headers: { 'x-api-key': key } })).statusCode).toBe(200)
    const keyId = (await page.locator('.secret code').textContent())!
    await page.getByRole('button', { name: `Rotate ${keyId}` }).click()
    await until(
      page,
      `document.querySelector('#new-key') && document.querySelector('#new-key').value !== '${key}'`,
    )
    const rotated = await shown.inputValue()
    expect((await h.app.inject({ url: '/v1/config', headers: { 'x-api-key': key } })).statusCode).toBe(401)
    expect((await h.app.inject({ url: '/v1/config', headers: { 'x-api-key': rotated } })).statusCode).toBe(
      200,
    )
    const rotatedId = (await page.locator('.secret code').textContent())!
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: `Revoke ${rotatedId}` }).click()
    await page
      .getByRole('row')
      .filter({ hasText: rotatedId })
      .getByText(/^revoked/)
      .waitFor()
    expect((await h.app.inject({ url: '/v1/config', headers: { 'x-api-key': rotated } })).statusCode).toBe(
      401,
    )
    await page.getByLabel('Origins (comma separated)').fill('https://shop.example')
    await page.getByRole('button', { name: 'Create publishable key' }).click()
    await until(
      page,
      "document.querySelector('#new-key') && document.querySelector('#new-key').value.startsWith('pk_')",
    )
    await page.getByRole('row').filter({ hasText: 'https://shop.example' }).waitFor()
    await shot(page, 'keys')
    await context.close()
  })

  it('adds a webhook endpoint showing its secret once, lists its deliveries and redelivers one', async () => {
    const { t, page, context } = await signedIn()
    await go(page, 'webhooks', 'Webhooks')
    // A public address literal: accepted without DNS; nothing is sent (the dispatcher does not run here).
    await page.getByLabel('URL (https)').fill('https://93.184.216.34/hook')
    await page.getByLabel('Description').fill('crm')
    await page.getByRole('checkbox', { name: 'list.entry_added' }).check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = page.getByLabel('Secret', { exact: true })
    await secret.waitFor()
    expect(await secret.inputValue()).toMatch(/^whsec_/)
    const id = (await page.locator('.secret code').textContent())!
    const added = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: t.headers,
      payload: { list: 'block', type: 'user', value: 'hooked-user' },
    })
    expect(added.statusCode).toBe(200)
    await page.getByRole('button', { name: `Disable ${id}` }).click()
    await page.getByRole('button', { name: `Enable ${id}` }).click()
    await page.getByRole('button', { name: `Disable ${id}` }).waitFor()
    await page.getByRole('link', { name: 'https://93.184.216.34/hook' }).click()
    await page.getByRole('heading', { name: 'Webhook deliveries', level: 1 }).waitFor()
    const row = page.getByRole('row').filter({ hasText: 'list.entry_added' })
    await row.waitFor()
    await row.getByRole('button', { name: /^Redeliver msg_/ }).click()
    await page.getByText(/queued again/).waitFor()
    await shot(page, 'webhook-deliveries')
    await context.close()
  })

  it('downloads a subject export and erases only after the typed confirmation', async () => {
    const { t, page, context } = await signedIn()
    await score(t, { event: 'signup', user_id: 'subject-1' })
    await go(page, 'privacy', 'Privacy')
    await page.locator('#exp-user_id').fill('subject-1')
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download export' }).click(),
    ])
    const file = await download.path()
    const exported = JSON.parse(readFileSync(file, 'utf8'))
    expect(exported.counts.events).toBe(1)
    await page.locator('#del-user_id').fill('subject-1')
    const erase = page.getByRole('button', { name: 'Erase' })
    expect(await erase.isDisabled()).toBe(true)
    await page.getByLabel('Type ERASE to confirm').fill('erase')
    expect(await erase.isDisabled()).toBe(true)
    await page.getByLabel('Type ERASE to confirm').fill('ERASE')
    await erase.click()
    await page.getByText(/^Erased: 1 events/).waitFor()
    await page.getByRole('row').filter({ hasText: 'forget' }).first().waitFor()
    await shot(page, 'privacy')
    await context.close()
  })

  it('checks an IP with "Use my IP" and shows every field', async () => {
    const { page, context } = await signedIn()
    await go(page, 'checker', 'Checker')
    await page.getByRole('button', { name: 'Use my IP' }).click()
    await until(page, "document.querySelector('#check-ip').value === '127.0.0.1'")
    await page.locator('form[aria-label="Check IP address"] .result h3', { hasText: 'reputation' }).waitFor()
    await page.locator('#check-email').fill('x@mailinator.com')
    await page.getByRole('button', { name: 'Check email' }).click()
    await page.locator('form[aria-label="Check Email"] .result').getByText('mailinator.com').first().waitFor()
    await shot(page, 'checker')
    await context.close()
  })

  it('has no serious accessibility violations on any page, at 360 px and on a desktop', async () => {
    const axe = readFileSync(AXE, 'utf8')
    for (const narrow of [false, true]) {
      let eventId = ''
      const { page, context } = await signedIn(narrow, async (t) => {
        for (const [i, email] of ['x@mailinator.com', 'y@example.com', 'z@example.org'].entries()) {
          eventId = (await score(t, { event: 'signup', user_id: `axe-${i}`, email, ip: '8.8.8.8' })).event_id
          h.clock.advance(3600_000)
        }
      })
      for (const p of [...PAGES, `events/${eventId}`]) {
        await page.goto(`${base}/console/#/${p}`)
        await page.locator('h1').waitFor()
        await until(page, "!document.body.textContent.includes('Loading')")
        // Evaluated through the DevTools protocol: the page's CSP does not apply to it.
        await page.evaluate(axe)
        const violations = (await page.evaluate(
          "axe.run(document, { resultTypes: ['violations'] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')) })))",
        )) as { id: string; impact: string; nodes: string[] }[]
        const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        expect(serious, `${p} (${narrow ? '360 px' : 'desktop'})`).toEqual([])
        // Everything outside a table's own scroll box fits the viewport.
        const wide = await page.evaluate(`[...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.parentElement?.closest('.scroll'))
          .map((e) => e.tagName + '.' + e.className + '#' + e.id)`)
        expect(wide, `${p} fits the width`).toEqual([])
        const overflow = await page.evaluate('document.documentElement.scrollWidth - innerWidth')
        expect(overflow, `${p}: the page itself does not scroll sideways`).toBeLessThanOrEqual(0)
        await shot(page, `page-${p.split('/')[0]}-${narrow ? '360' : 'desktop'}`)
      }
      // On a phone the menu folds behind a button that opens it.
      if (narrow) {
        const overview = page.getByRole('navigation').getByRole('link', { name: 'Overview' })
        expect(await overview.isVisible()).toBe(false)
        await page.getByRole('button', { name: 'Menu' }).click()
        expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('true')
        await overview.click()
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
        // Following a link folds the menu again.
        await overview.waitFor({ state: 'hidden' })
        expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('false')
      }
      // Keyboard focus is visible (the first control after the page heading).
      if (narrow) {
        await page.getByRole('heading', { level: 1 }).focus()
        await page.keyboard.press('Tab')
        const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')
        expect(outline).not.toBe('none')
      }
      await context.close()
    }
    expect(cspViolations).toEqual([])
  }, 120_000)
})
