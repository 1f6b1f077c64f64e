import type * as crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { SharedRedis } from '../../src/redis/connection.js'
import { RedisLimiter } from '../../src/redis/limiter.js'
import {
  createConsoleUser,
  MAX_PASSWORD_CHECKS,
  SIGN_IN_FAILURES_PER_EMAIL,
  SIGN_IN_FAILURES_PER_IP,
} from '../../src/services/console/console-auth.js'
import { build, type Harness } from '../helpers/build.js'
import { CONSOLE_PASSWORD } from '../helpers/console.js'
import { REDIS_URL, redisAvailable, testPrefix } from '../helpers/redis.js'

/**
 * Issue 26, item 2: sign-in attempts sent at once cannot get more password checks than the throttle
 * allows. scrypt is counted where it runs (node:crypto), with the most computations seen at once.
 */
const scrypts = vi.hoisted(() => ({ calls: 0, running: 0, most: 0 }))
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof crypto>()
  const scrypt = (...args: unknown[]) => {
    const cb = args.pop() as (err: Error | null, key: Buffer) => void
    scrypts.calls++
    scrypts.running++
    scrypts.most = Math.max(scrypts.most, scrypts.running)
    ;(real.scrypt as (...a: unknown[]) => void)(...args, (err: Error | null, key: Buffer) => {
      scrypts.running--
      cb(err, key)
    })
  }
  return { ...real, default: { ...real, scrypt }, scrypt }
})

const haveRedis = await redisAvailable()

function suite(name: string, limiter: () => Promise<{ limiter?: RedisLimiter; close(): Promise<void> }>) {
  describe(name, () => {
    let h: Harness
    let email: string
    let closeLimiter: () => Promise<void>
    let n = 0

    beforeAll(async () => {
      const l = await limiter()
      closeLimiter = l.close
      h = await build(l.limiter ? { limiter: l.limiter } : {})
      const t = await h.tenant()
      email = `owner-${Date.now()}@example.com`
      await createConsoleUser(
        h.store,
        h.clock,
        { tenantId: t.tenantId, email, password: CONSOLE_PASSWORD },
        h.services.passwordCost,
      )
      // The dummy hash of unknown emails is computed once, on the first unknown sign-in: not in a burst.
      await signIn('warm-up@example.com', 'wrong password', '198.51.100.250')
    })
    afterAll(async () => {
      await h.close()
      await closeLimiter()
    })

    const signIn = (address: string, password: string, ip: string) =>
      h.app.inject({
        method: 'POST',
        url: '/console/api/sign-in',
        remoteAddress: ip,
        payload: { email: address, password },
      })

    async function burst(attempts: Array<[string, string]>, ip: string) {
      scrypts.calls = 0
      scrypts.most = 0
      const res = await Promise.all(attempts.map(([e, p]) => signIn(e, p, ip)))
      const codes = res.map((r) => r.statusCode)
      return { checks: scrypts.calls, most: scrypts.most, codes }
    }

    it('40 attempts at once on one email get at most the per-email number of password checks', async () => {
      const ip = `198.51.100.${++n}`
      const r = await burst(
        Array.from({ length: 40 }, (_, i) => [email, `wrong password ${i}`]),
        ip,
      )
      expect(r.checks).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_EMAIL)
      expect(r.codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(40 - SIGN_IN_FAILURES_PER_EMAIL)
      expect(r.codes.every((c) => c === 401 || c === 429)).toBe(true)
    })

    it('40 attempts at once on 40 emails from one address get at most the per-address number', async () => {
      const ip = `198.51.100.${++n}`
      const r = await burst(
        Array.from({ length: 40 }, (_, i) => [`nobody-${i}-${ip}@example.com`, 'wrong password']),
        ip,
      )
      expect(r.checks).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_IP)
      expect(r.most).toBeLessThanOrEqual(MAX_PASSWORD_CHECKS)
      expect(r.codes.every((c) => c === 401 || c === 429)).toBe(true)
    })

    it('attempts from many addresses at once never run more than the cap of password checks', async () => {
      scrypts.calls = 0
      scrypts.most = 0
      const res = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          signIn(`someone-${i}-${name.length}@example.com`, 'wrong password', `192.0.2.${i + 1}`),
        ),
      )
      expect(scrypts.most).toBeLessThanOrEqual(MAX_PASSWORD_CHECKS)
      expect(res.some((r) => r.statusCode === 429)).toBe(true)
      expect(res.every((r) => r.statusCode === 401 || r.statusCode === 429)).toBe(true)
    })

    it('a successful sign-in gives its attempt back', async () => {
      const ip = `198.51.100.${++n}`
      const user = `refund-${name.length}-${Date.now()}@example.com`
      await createConsoleUser(
        h.store,
        h.clock,
        {
          tenantId: (await h.tenant()).tenantId,
          email: user,
          password: CONSOLE_PASSWORD,
        },
        h.services.passwordCost,
      )
      // Signed in once first, so every attempt below counts in one budget (this known address's).
      expect((await signIn(user, CONSOLE_PASSWORD, ip)).statusCode).toBe(200)
      for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL - 1; i++)
        expect((await signIn(user, 'wrong password', ip)).statusCode).toBe(401)
      for (let i = 0; i < 3; i++) expect((await signIn(user, CONSOLE_PASSWORD, ip)).statusCode).toBe(200)
      expect((await signIn(user, 'wrong password', ip)).statusCode).toBe(401)
      expect((await signIn(user, CONSOLE_PASSWORD, ip)).statusCode).toBe(429)
    })
  })
}

suite('sign-in throttle under concurrency, in-process limiter', async () => ({ close: async () => {} }))

describe.skipIf(!haveRedis)('with Redis', () => {
  suite('sign-in throttle under concurrency, Redis limiter', async () => {
    const redis = new SharedRedis(REDIS_URL, testPrefix())
    for (let i = 0; i < 100 && !redis.ready; i++) await new Promise((r) => setTimeout(r, 20))
    return { limiter: new RedisLimiter(redis, 1), close: () => redis.close() }
  })
})
