import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createConsoleUser, SIGN_IN_FAILURES_PER_EMAIL } from '../../src/services/console/console-auth.js'
import { build, type Harness } from '../helpers/build.js'
import { CONSOLE_PASSWORD } from '../helpers/console.js'

/**
 * Issue 26, item 7: failed attempts from anywhere cannot lock a user out of an address they have
 * signed in from before; unknown addresses keep the per-email limit, and a known address has its own.
 */
let h: Harness
let tenantId: string
let n = 0

beforeAll(async () => {
  h = await build()
  tenantId = (await h.tenant()).tenantId
})
afterAll(async () => {
  await h.close()
})

async function user(): Promise<string> {
  const email = `user-${++n}@example.com`
  await createConsoleUser(
    h.store,
    h.clock,
    { tenantId, email, password: CONSOLE_PASSWORD },
    h.services.passwordCost,
  )
  return email
}

const signIn = (email: string, password: string, ip: string) =>
  h.app.inject({
    method: 'POST',
    url: '/console/api/sign-in',
    remoteAddress: ip,
    payload: { email, password },
  })

describe('sign-in lockout', () => {
  it('an address that signed in before gets through a lockout made from elsewhere', async () => {
    const email = await user()
    const home = '198.51.100.77'
    expect((await signIn(email, CONSOLE_PASSWORD, home)).statusCode).toBe(200)
    // Someone else spends the email's budget from other addresses.
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL; i++)
      expect((await signIn(email, 'a guessed password', `203.0.113.${100 + i}`)).statusCode).toBe(401)
    expect((await signIn(email, 'a guessed password', '203.0.113.200')).statusCode).toBe(429)
    // An unknown address is refused even with the right password: the per-email limit holds.
    expect((await signIn(email, CONSOLE_PASSWORD, '203.0.113.201')).statusCode).toBe(429)
    // The user's own address is not.
    expect((await signIn(email, CONSOLE_PASSWORD, home)).statusCode).toBe(200)
  })

  it('a known address has a limit of its own', async () => {
    const email = await user()
    const home = '198.51.100.78'
    expect((await signIn(email, CONSOLE_PASSWORD, home)).statusCode).toBe(200)
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL; i++)
      expect((await signIn(email, 'a typo password', home)).statusCode).toBe(401)
    expect((await signIn(email, CONSOLE_PASSWORD, home)).statusCode).toBe(429)
  })
})
