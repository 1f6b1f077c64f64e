import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core'
import { missing } from './capabilities.js'

/** Debian's chromium, installed by .ci/run; the tests never download a browser of their own. */
export const CHROMIUM_PATH = '/usr/bin/chromium'

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** Whether the browser tests can run. CI (VERDICT_REQUIRE_ALL / _BROWSER) fails when they cannot. */
export function browserAvailable(): boolean {
  return (
    existsSync(CHROMIUM_PATH) ||
    missing('chromium', `not found at ${CHROMIUM_PATH} (apt-get install -y chromium)`)
  )
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS })
}

/** A fresh profile (browser context) with one page open at `url`. */
export async function openPage(browser: Browser, url: string, options: BrowserContextOptions = {}) {
  const context = await browser.newContext(options)
  const page = await context.newPage()
  await page.goto(url)
  return { context, page }
}

export interface Site {
  /** The page's origin (http://localhost:port): a secure context, and another origin than the backend. */
  origin: string
  url(path: string): string
  close(): Promise<void>
}

/** The shop's web site: serves fixed HTML pages by path, nothing else. */
export async function startSite(pages: Record<string, string>): Promise<Site> {
  const server = createServer((req, res) => {
    const html = pages[(req.url ?? '/').split('?')[0]!]
    if (html === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html)
  })
  const port = await listen(server)
  const origin = `http://localhost:${port}`
  return { origin, url: (path) => origin + path, close: () => closeServer(server) }
}

export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** Polls `read` until `done` holds (the browser acts on its own clock); fails with `what` after `ms`. */
export async function waitUntil<T>(read: () => T, done: (v: T) => boolean, what: string, ms = 10_000) {
  const end = Date.now() + ms
  for (;;) {
    const v = read()
    if (done(v)) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Page Visibility emulation: headless pages are always visible, so the test overrides the state and fires the event. */
export async function setVisibility(page: Page, state: 'visible' | 'hidden'): Promise<void> {
  await page.evaluate(`(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' })
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${state === 'hidden'} })
    document.dispatchEvent(new Event('visibilitychange'))
  })()`)
}
