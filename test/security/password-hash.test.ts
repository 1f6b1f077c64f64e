import { randomBytes, scryptSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword, PASSWORD_COST, verifyPassword } from '../../src/services/console/console-auth.js'
import { build, type Harness } from '../helpers/build.js'

/**
 * Issue 26, item 10: passwords are hashed with scrypt at the OWASP minimum (N=2^17, r=8, p=1), and a
 * hash made with the old, lower cost is replaced on the user's next successful sign-in.
 */
let h: Harness

beforeAll(async () => {
  // The production cost, not the harness's fast one.
  h = await build({ passwordCost: PASSWORD_COST })
})
afterAll(async () => {
  await h.close()
})

const PASSWORD = 'an old but long password'

/** A hash as the previous release stored it: N=2^15. */
function oldHash(password: string): string {
  const salt = randomBytes(16)
  const key = scryptSync(password, salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 })
  return ['scrypt', 32768, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$')
}

const storedHash = async (email: string) => (await h.store.console.usersByEmail(email))[0]?.passwordHash

describe('password hashing cost', () => {
  it('new hashes use N=2^17, r=8, p=1 and verify', async () => {
    const hash = await hashPassword(PASSWORD)
    expect(hash.split('$').slice(0, 4)).toEqual(['scrypt', '131072', '8', '1'])
    expect(await verifyPassword(PASSWORD, hash)).toBe(true)
    expect(await verifyPassword(`${PASSWORD}!`, hash)).toBe(false)
  })

  it('an old-cost hash still signs in and is rehashed at the new cost; a failed sign-in changes nothing', async () => {
    const t = await h.tenant()
    const email = 'old-hash@example.com'
    const old = oldHash(PASSWORD)
    await h.store.console.createUser(
      { id: 'usr_old', tenantId: t.tenantId, email, createdMs: h.clock.now() },
      old,
    )
    const signIn = (password: string) =>
      h.app.inject({ method: 'POST', url: '/console/api/sign-in', payload: { email, password } })
    expect((await signIn('a wrong password')).statusCode).toBe(401)
    expect(await storedHash(email)).toBe(old)
    expect((await signIn(PASSWORD)).statusCode).toBe(200)
    const rehashed = await storedHash(email)
    expect(rehashed?.split('$').slice(0, 4)).toEqual(['scrypt', '131072', '8', '1'])
    expect((await signIn(PASSWORD)).statusCode).toBe(200)
    // Already at the current cost: not rewritten again.
    expect(await storedHash(email)).toBe(rehashed)
  })

  it("rehashes to the server's own cost, not to the default, and leaves a hash of that cost alone", async () => {
    const other = await build({ passwordCost: { N: 4096, r: 8, p: 1 } })
    try {
      const t = await other.tenant()
      const email = 'own-cost@example.com'
      const own = await hashPassword(PASSWORD, { N: 4096, r: 8, p: 1 })
      await other.store.console.createUser(
        { id: 'usr_own', tenantId: t.tenantId, email, createdMs: other.clock.now() },
        own,
      )
      const signIn = () =>
        other.app.inject({
          method: 'POST',
          url: '/console/api/sign-in',
          payload: { email, password: PASSWORD },
        })
      expect((await signIn()).statusCode).toBe(200)
      expect((await other.store.console.usersByEmail(email))[0]?.passwordHash).toBe(own)
      await other.store.console.setPasswordHash('usr_own', oldHash(PASSWORD))
      expect((await signIn()).statusCode).toBe(200)
      const rehashed = (await other.store.console.usersByEmail(email))[0]?.passwordHash
      expect(rehashed?.split('$').slice(0, 4)).toEqual(['scrypt', '4096', '8', '1'])
    } finally {
      await other.close()
    }
  })
})
