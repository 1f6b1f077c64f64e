import { setImmediate as nextTurn } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { contextFor } from '../../src/context.js'
import { SIMULATE_YIELD_EVERY, simulateConfig } from '../../src/services/rules/simulate.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

// Issue 26 item 5: one tenant's heavy routes cannot starve the others.
let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

/** `n` scored events of the tenant, in batches. */
async function events(t: TestTenant, n: number) {
  for (let done = 0; done < n; done += 500) {
    const rows = Array.from({ length: Math.min(500, n - done) }, (_, i) => ({
      event: 'signup',
      user_id: `u-${done + i}`,
      ip: '8.8.8.8',
    }))
    const res = await h!.app.inject({
      method: 'POST',
      url: '/v1/batch/score',
      headers: t.headers,
      payload: { rows },
    })
    expect(res.statusCode, res.body).toBe(200)
  }
}

const simulate = (t: TestTenant, limit: number) =>
  h!.app.inject({
    method: 'POST',
    url: '/v1/config/simulate',
    headers: t.headers,
    payload: { weights: { datacenterIp: 80 }, limit },
  })

describe('simulations', () => {
  it('yield to other requests every few hundred events (a deterministic count of event-loop turns)', async () => {
    h = await build()
    const t = await h.tenant({ rateLimit: 100_000 })
    await events(t, 1000)
    const ctx = contextFor(h.services, (await h.store.tenants.get(t.tenantId))!, 'req-test')
    let turns = 0
    let running = true
    const ticker = (async () => {
      while (running) {
        await nextTurn()
        turns++
      }
    })()
    const result = await simulateConfig(ctx, { weights: { datacenterIp: 80 }, limit: 1000 })
    running = false
    await ticker
    expect(result.events).toBe(1000)
    // Other work got a turn at least once per SIMULATE_YIELD_EVERY events (one page of 5,000 before).
    expect(SIMULATE_YIELD_EVERY).toBeLessThanOrEqual(250)
    expect(turns).toBeGreaterThanOrEqual(Math.floor(1000 / SIMULATE_YIELD_EVERY))
  })

  it('one in flight per tenant (429 with Retry-After beyond); another tenant is not held up', async () => {
    h = await build()
    const a = await h.tenant({ rateLimit: 100_000 })
    const b = await h.tenant({ rateLimit: 100_000 })
    await events(a, 600)
    await events(b, 10)
    const [first, second, other] = await Promise.all([simulate(a, 600), simulate(a, 600), simulate(b, 10)])
    const codes = [first.statusCode, second.statusCode].sort()
    expect(codes).toEqual([200, 429])
    const refused = first.statusCode === 429 ? first : second
    expect(refused.json().code).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(other.statusCode).toBe(200)
    // Once it finished, the next one runs.
    expect((await simulate(a, 600)).statusCode).toBe(200)
  })

  it('a per-tenant budget of simulated events per minute', async () => {
    h = await build({ tenantLimits: { simulatedEventsPerMinute: 1000 } })
    const t = await h.tenant({ rateLimit: 100_000 })
    await events(t, 10)
    expect((await simulate(t, 600)).statusCode).toBe(200)
    const over = await simulate(t, 600)
    expect(over.statusCode).toBe(429)
    expect(over.json().error).toContain('simulated events')
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    h.clock.advance(61_000)
    expect((await simulate(t, 600)).statusCode).toBe(200)
  })
})

describe('keys and console users per tenant', () => {
  it('are capped on the console routes, so minting keys cannot multiply the rate limit', async () => {
    h = await build({ tenantLimits: { keysPerTenant: 2, consoleUsersPerTenant: 1 } })
    const t = await h.tenant()
    const ctx = contextFor(h.services, (await h.store.tenants.get(t.tenantId))!, 'req-test')
    const { createTenantKey, addTenantUser } = await import('../../src/services/console/console.js')
    // The tenant's first key counts: one more fits.
    await createTenantKey(ctx, {})
    await expect(createTenantKey(ctx, {})).rejects.toMatchObject({ code: 'conflict' })
    await addTenantUser(ctx, { email: 'one@example.com', password: 'correct horse battery staple' })
    await expect(
      addTenantUser(ctx, { email: 'two@example.com', password: 'correct horse battery staple' }),
    ).rejects.toMatchObject({ code: 'conflict' })
  })
})
