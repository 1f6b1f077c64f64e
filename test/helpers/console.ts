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
