import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'
import { consoleSession } from '../helpers/console.js'

/**
 * Issue 26, item 6: adding a console user whose email is taken answers the same whether the email is
 * taken in the caller's own tenant or in another one, and never names it.
 */
let h: Harness

beforeAll(async () => {
  h = await build()
})
afterAll(async () => {
  await h.close()
})

describe('a taken console email', () => {
  it('answers alike for this tenant and another, naming neither the email nor the tenant', async () => {
    const a = await h.tenant()
    const b = await h.tenant()
    const inA = await consoleSession(h, a, 'someone-in-a@example.com')
    const inB = await consoleSession(h, b, 'someone-in-b@example.com')
    const add = (email: string) =>
      h.app.inject({
        method: 'POST',
        url: '/console/api/users',
        headers: inB.write,
        payload: { email, password: 'a long enough password' },
      })
    const other = await add(inA.email)
    const own = await add(inB.email)
    expect(other.statusCode).toBe(own.statusCode)
    const body = (r: typeof own) => {
      const { request_id: _, ...rest } = r.json()
      return rest
    }
    expect(body(other)).toEqual(body(own))
    expect(other.body).not.toContain(inA.email)
    expect(other.body).not.toContain(a.tenantId)
  })
})
