import { createConsoleUser } from '../../src/services/console/console-auth.js'
import type { Harness, TestTenant } from './build.js'

export const CONSOLE_PASSWORD = 'correct horse battery staple'

export interface ConsoleSession {
  email: string
  userId: string
  cookie: string
  csrf: string
  /** Headers of a safe request (GET). */
  read: { cookie: string }
  /** Headers of a state-changing request: the cookie and the CSRF token. */
  write: { cookie: string; 'x-csrf-token': string }
}

let n = 0

/** A console user of `tenant`, signed in over HTTP. */
export async function consoleSession(
  h: Harness,
  tenant: TestTenant,
  email?: string,
): Promise<ConsoleSession> {
  const address = email ?? `analyst-${++n}-${tenant.tenantId.slice(0, 8)}@example.com`
  const user = await createConsoleUser(
    h.store,
    h.clock,
    {
      tenantId: tenant.tenantId,
      email: address,
      password: CONSOLE_PASSWORD,
    },
    h.services.passwordCost,
  )
  return signInAs(h, user.email, user.userId)
}

export async function signInAs(h: Harness, email: string, userId = ''): Promise<ConsoleSession> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/console/api/sign-in',
    payload: { email, password: CONSOLE_PASSWORD },
  })
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`)
  const setCookie = String(res.headers['set-cookie'])
  const cookie = setCookie.split(';')[0]!
  const csrf = res.json().csrfToken as string
  return { email, userId, cookie, csrf, read: { cookie }, write: { cookie, 'x-csrf-token': csrf } }
}

/** The part of a browser page the console sign-in needs (playwright-core's Page). */
interface SignInPage {
  goto(url: string): Promise<unknown>
  getByLabel(label: string): { fill(value: string): Promise<void> }
  getByRole(
    role: 'button' | 'heading',
    o: { name: string; level?: number },
  ): {
    click(): Promise<void>
    waitFor(): Promise<void>
  }
  locator(selector: string): { waitFor(): Promise<void> }
}

/**
 * Signs `email` in through the console's own form at `base` and waits for the overview's data, so no
 * request of the sign-in is still in flight when a test moves the clock.
 */
export async function signInPage(page: SignInPage, base: string, email: string): Promise<void> {
  await page.goto(`${base}/console/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(CONSOLE_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
  await page.locator('.tiles').waitFor()
}
