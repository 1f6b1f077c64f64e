import { afterEach, describe, expect, it } from 'vitest'
import { unpackJson } from '../../src/store/events/compact-json.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'

// Mailbox names the gibberish model flags, and one it does not.
const GENERATED = ['xkqzvbwp', 'qzxvkrtm', 'wpxkqzvb', 'vbwpxkqz', 'zvkqxbwr', 'rtmqzxvk']
const HOUR = 3_600_000

describe.each<Engine>(['sqlite', 'postgres'])('gibberish_wave (%s)', (engine) => {
  let h: Harness
  let t: TestTenant
  afterEach(async () => {
    await h.close()
  })

  const score = async (payload: Record<string, unknown>) => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json() as {
      checks: { reason: string; weight: number; evidence: Record<string, unknown> }[]
    }
    return Object.fromEntries(body.checks.map((c) => [c.reason, c]))
  }
  const signup = (i: number, local = GENERATED[i % GENERATED.length]) =>
    score({ event: 'signup', user_id: `gen-${i}-${local}`, email: `${local}${i}@gmail.com` })

  it('fires on the third generated-mailbox sign-up within six hours, never on logins or real names', async () => {
    h = await build({ engine })
    t = await h.tenant()
    const first = await signup(0)
    expect(first['gibberish_email']?.weight).toBe(20)
    expect(first).not.toHaveProperty('gibberish_wave')
    h.clock.advance(HOUR)
    expect(await signup(1)).not.toHaveProperty('gibberish_wave')
    h.clock.advance(HOUR)
    const third = await signup(2)
    expect(third['gibberish_wave']).toMatchObject({
      weight: 25,
      evidence: { recent: 3, expected: 0, window_hours: 6, threshold: 3 },
    })
    // Stored in the compact form (their key names are not repeated in the row) and read back whole.
    const row = await h.store.db.get<{ inputs: string; checks: string }>(
      'SELECT inputs, checks FROM events WHERE tenant_id = ? ORDER BY created_ms DESC LIMIT 1',
      [t.tenantId],
    )
    expect(row?.inputs).not.toContain('"recentEvents"')
    expect(row?.checks).not.toContain('"window_hours"')
    const stored = unpackJson<{ history: { generatedMailboxes: { recent: number } } }>(row!.inputs)
    expect(stored.history.generatedMailboxes.recent).toBe(3)
    expect(JSON.stringify(unpackJson(row!.checks))).toContain('"window_hours":6')
    // The same mailbox logging in is not a sign-up; a real name signing up is not generated.
    expect(
      await score({ event: 'login', user_id: 'gen-2-wpxkqzvb', email: 'wpxkqzvb2@gmail.com' }),
    ).not.toHaveProperty('gibberish_wave')
    const real = await signup(3, 'maria.garcia')
    expect(real).not.toHaveProperty('gibberish_email')
    expect(real).not.toHaveProperty('gibberish_wave')
    // Seven hours later the first hours have left the window: the wave starts again from the recent ones.
    h.clock.advance(7 * HOUR)
    expect(await signup(4)).not.toHaveProperty('gibberish_wave')
  })

  it("needs a count far above the tenant's own share of such mailboxes at these hours on the days before", async () => {
    h = await build({ engine })
    t = await h.tenant()
    // At this hour on each of the last seven days: 20 events, 2 of them with generated-looking mailboxes.
    for (let day = 0; day < 7; day++) {
      for (let i = 0; i < 20; i++) {
        const local = i < 2 ? `${GENERATED[i]}${day}` : `ann.lee${day}${i}`
        await score({ event: 'login', user_id: `steady-${day}-${i}`, email: `${local}@example.com` })
      }
      h.clock.advance(24 * HOUR)
    }
    // Now only generated sign-ups: k of them are expected to hold 0.1 k such mailboxes by that share; 5
    // happen by chance 0.02 % of the time (k = 5), 6 only 0.003 %.
    const seen = []
    for (let i = 0; i < 6; i++) seen.push((await signup(10 + i))['gibberish_wave']?.evidence ?? null)
    expect(seen.slice(0, 5)).toEqual(Array(5).fill(null))
    expect(seen[5]).toEqual({ recent: 6, expected: 0.6, window_hours: 6, threshold: 3 })
  })

  it('a tenant with ordinary traffic at these hours is compared with it, not with nothing', async () => {
    h = await build({ engine })
    t = await h.tenant()
    // Yesterday at this hour: ten events, one with a generated-looking mailbox (10 %).
    for (let i = 0; i < 10; i++) {
      const local = i === 0 ? GENERATED[0] : `noah.kim${i}`
      await score({ event: 'login', user_id: `y-${i}`, email: `${local}@example.com` })
    }
    h.clock.advance(24 * HOUR)
    // Today 40 ordinary events, then generated sign-ups: 3 of 43 events is 0.7 times the expected 4.3.
    for (let i = 0; i < 40; i++)
      await score({ event: 'login', user_id: `o-${i}`, email: `ann.lee${i}@example.com` })
    const seen = []
    for (let i = 0; i < 3; i++) seen.push((await signup(20 + i))['gibberish_wave'] ?? null)
    expect(seen).toEqual([null, null, null])
  })
})
