import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'

// One fingerprint seen from five homes (five networks).
const IPS = ['73.162.10.20', '79.200.1.1', '24.5.6.7', '98.1.2.3', '66.30.4.5']
const FP = 'fp-cookie-clearer'
const HOUR = 3_600_000

interface Check {
  reason: string
  weight: number
  message: string
  evidence: Record<string, unknown>
}

describe.each<Engine>(['sqlite', 'postgres'])('one browser that clears its cookie (%s)', (engine) => {
  let h: Harness
  let t: TestTenant
  afterEach(async () => {
    await h.close()
  })

  /** A sign-up of account `i` from home `i`, replaying `token` when given; the device_reuse check and the new token. */
  const signup = async (i: number, token?: string) => {
    h.clock.advance(6 * HOUR)
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: t.headers,
      payload: {
        event: 'signup',
        user_id: `acct-${i}`,
        ip: IPS[i - 1],
        device_id: FP,
        ...(token ? { device_token: token } : {}),
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json() as { checks: Check[]; device_token: string; device: { resolution_rung: number } }
    return {
      reuse: body.checks.find((c) => c.reason === 'device_reuse'),
      token: body.device_token,
      rung: body.device.resolution_rung,
    }
  }
  const markers = async () =>
    (
      await h.store.db.all<{ kind: string }>(
        "SELECT kind FROM device_links WHERE tenant_id = ? AND kind IN ('fx', 'fm') AND key = ? ORDER BY kind",
        [t.tenantId, FP],
      )
    ).map((r) => r.kind)

  it('counts its accounts undivided once it was seen from four addresses, tokens one after another', async () => {
    h = await build({ engine })
    t = await h.tenant()
    const a1 = await signup(1)
    // The cookie is kept once: one token carries two accounts.
    const a2 = await signup(2, a1.token)
    expect(a2.rung).toBe(1)
    expect(a2.reuse).toMatchObject({ weight: 25, evidence: { accounts: 2 } })
    expect(a2.reuse?.evidence).not.toHaveProperty('accounts_one_browser')
    expect(await markers()).toEqual(['fm'])
    // Cleared: a new identity at rung 2; three addresses are not enough.
    const a3 = await signup(3)
    expect(a3.rung).toBe(2)
    expect(a3.reuse).toMatchObject({ weight: 15, evidence: { accounts: 3 } })
    expect(a3.reuse?.evidence).not.toHaveProperty('accounts_one_browser')
    // Kept again from a fourth address: the token holds 2 accounts, the browser 4 (medium, corroborated).
    const a4 = await signup(4, a3.token)
    expect(a4.rung).toBe(1)
    expect(a4.reuse).toMatchObject({
      key: 'deviceReuseMed',
      weight: 40,
      evidence: { accounts: 4, accounts_one_browser: 4, tier: 'medium', corroborated: true },
    })
    expect(a4.reuse?.message).toContain('one browser that cleared its cookie')
    // Cleared again: two token identities were replayed with the fingerprint, which alone would divide
    // its 5 accounts by 2; one browser counts them all (medium, not corroborated: one per network).
    const a5 = await signup(5)
    expect(a5.rung).toBe(2)
    expect(a5.reuse).toMatchObject({ weight: 30, evidence: { accounts: 5, accounts_one_browser: 5 } })
    expect(await markers()).toEqual(['fm'])
  })

  it('keeps dividing when two token identities alternate (two browsers with one fingerprint)', async () => {
    h = await build({ engine })
    t = await h.tenant()
    const a1 = await signup(1)
    await signup(2, a1.token)
    const a3 = await signup(3)
    // The first browser comes back after the second one was seen: two browsers at once.
    const a4 = await signup(4, a1.token)
    expect(a4.rung).toBe(1)
    expect(a4.reuse).toMatchObject({ weight: 25, evidence: { accounts: 3 } })
    expect(a4.reuse?.evidence).not.toHaveProperty('accounts_one_browser')
    expect(await markers()).toEqual(['fm', 'fx'])
    const a5 = await signup(5, a3.token)
    expect(a5.reuse?.evidence).not.toHaveProperty('accounts_one_browser')
    expect((await signup(5)).reuse).toMatchObject({ weight: 15, evidence: { accounts: 3 } })
  })

  it("erasing one of the fingerprint's accounts forgets its markers", async () => {
    h = await build({ engine })
    t = await h.tenant()
    const a1 = await signup(1)
    await signup(2, a1.token)
    expect(await markers()).toEqual(['fm'])
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/forget',
      headers: t.headers,
      payload: { user_id: 'acct-2' },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(await markers()).toEqual([])
    await signup(3)
    const a4 = await signup(4)
    // Four addresses, but nothing shows one browser any more: no token has carried two accounts since.
    expect(a4.reuse?.evidence).not.toHaveProperty('accounts_one_browser')
  })
})
