import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { carriedIdentity, scoreOk } from '../helpers/device.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

// IPs whose class the test intel knows (as in device.test.ts); a network is the /24 (IPv4) or /48 (IPv6).
const DATACENTER = '8.8.8.8'
const RESIDENTIAL = '73.162.10.20'
const VPN = '185.65.134.7'

type Body = { device?: Record<string, unknown>; device_token: string }

/** Decision 26: resolution that links visits. */
describe.each<Engine>(['sqlite', 'postgres'])('device resolution on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  const score = (payload: Record<string, unknown>, headers = t.headers) =>
    scoreOk<Body>(h, headers, { event: 'login', ...payload })
  /** The identity the response's device token carries. */
  const carried = (b: Body) => carriedIdentity(h, t.tenantId, b.device_token)

  run(
    'links visits: one identity from the first visit through token replays, per network at rung 2',
    async () => {
      await setup()
      const id = (b: Body) => b.device?.['resolved_id']
      // First visit with a fingerprint and an IP: rung 2, a new identity, the one its token carries.
      const first = await score({ device_id: 'fp-L', ip: RESIDENTIAL })
      expect(first.device).toMatchObject({ resolution_rung: 2 })
      const i1 = carried(first)
      expect(id(first)).toBe(i1)
      // Replaying the token keeps the identity on any network, and every re-signed token carries it.
      h.clock.advance(1000)
      const away = await score({ device_id: 'fp-L', ip: DATACENTER, device_token: first.device_token })
      expect(away.device).toMatchObject({ resolution_rung: 1, resolved_id: i1 })
      expect(carried(away)).toBe(i1)
      h.clock.advance(1000)
      const back = await score({ device_id: 'fp-L', ip: VPN, device_token: away.device_token })
      expect(back.device).toMatchObject({ resolution_rung: 1, resolved_id: i1 })
      // Without the token, on the first visit's network (another host of the same /24): the identity
      // issued there.
      h.clock.advance(1000)
      const again = await score({ device_id: 'fp-L', ip: '73.162.10.99' })
      expect(again.device).toMatchObject({ resolution_rung: 2, resolved_id: i1 })
      expect(carried(again)).toBe(i1)
      // On a network where nothing was issued to this fingerprint before: a new identity.
      const elsewhere = await score({ device_id: 'fp-L', ip: '79.203.1.1' })
      expect(elsewhere.device).toMatchObject({ resolution_rung: 2 })
      const i2 = carried(elsewhere)
      expect(id(elsewhere)).toBe(i2)
      expect(i2).not.toBe(i1)
      // i2 replayed on the first network: two token identities have now been replayed with fp-L, so
      // it is known to collide and hands no identity over any more (issue 27), on either network.
      h.clock.advance(1000)
      const moved = await score({ device_id: 'fp-L', ip: RESIDENTIAL, device_token: elsewhere.device_token })
      expect(moved.device).toMatchObject({ resolution_rung: 1, resolved_id: i2 })
      h.clock.advance(1000)
      expect([i1, i2]).not.toContain(id(await score({ device_id: 'fp-L', ip: RESIDENTIAL })))
      expect([i1, i2]).not.toContain(id(await score({ device_id: 'fp-L', ip: '8.8.8.9' })))
      // Another tenant's fingerprint on the same network is another device.
      const other = await h.tenant()
      expect(
        (await score({ device_id: 'fp-L', ip: RESIDENTIAL }, other.headers)).device?.['resolved_id'],
      ).not.toBe(i2)

      // A fingerprint with neither an IP nor a usable token: rung 3, a fresh identity that links nothing.
      const bare = await score({ device_id: 'fp-L', user_id: 'z1' })
      expect(bare.device).toMatchObject({
        id: 'fp-L',
        resolution_rung: 3,
        resolution: 'probabilistic',
        collision_risk: 0,
        account_count: 1,
      })
      expect(id(bare)).toBe(carried(bare))
      expect([i1, i2]).not.toContain(id(bare))
      const bare2 = await score({ device_id: 'fp-L', user_id: 'z2', device_token: 'not-a-token' })
      expect(bare2.device).toMatchObject({
        resolution_rung: 3,
        token_rejected: 'malformed',
        account_count: 1,
      })
      expect(id(bare2)).not.toBe(id(bare))
      // Its accounts were not linked to the fingerprint: the next rung-2 visit counts only its own.
      const later = await score({ device_id: 'fp-L', user_id: 'z3', ip: RESIDENTIAL })
      expect(later.device).toMatchObject({ resolution_rung: 2, account_count: 1 })
      // An invalid IP is no IP.
      expect((await score({ device_id: 'fp-L', ip: 'not-an-ip' })).device).toMatchObject({
        resolution_rung: 3,
      })

      // A batch applies the rule row by row: two token-less rows of a new fingerprint on one network
      // share the identity the first one was issued.
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/batch/score',
        headers: t.headers,
        payload: {
          rows: [
            { event: 'login', device_id: 'fp-B', ip: RESIDENTIAL },
            { event: 'login', device_id: 'fp-B', ip: '73.162.10.98' },
            { event: 'login', device_id: 'fp-B', ip: DATACENTER },
          ],
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      const rows = (res.json() as { results: Body[] }).results
      expect(id(rows[1]!)).toBe(id(rows[0]!))
      expect(carried(rows[1]!)).toBe(id(rows[0]!))
      expect(id(rows[2]!)).not.toBe(id(rows[0]!))
      expect(id(await score({ device_id: 'fp-B', ip: RESIDENTIAL }))).toBe(id(rows[0]!))
    },
  )

  // Issue 27: identical devices of different people are not one device.
  run('a newcomer or a fingerprint known to collide gets no handed-over identity', async () => {
    await setup()
    const reuse = (b: Body) =>
      (b as unknown as { checks: { reason: string; weight: number }[] }).checks.find(
        (c) => c.reason === 'device_reuse',
      )
    // A colleague with the same laptop image on the office network is a newcomer to the identity
    // issued there: a new identity. The same person back without the cookie gets theirs back.
    const a = await score({ device_id: 'fp-O', user_id: 'alice', ip: '73.162.20.1' })
    const ia = carried(a)
    await score({ device_id: 'fp-O', user_id: 'alice', ip: '73.162.20.1', device_token: a.device_token })
    const b = await score({ device_id: 'fp-O', user_id: 'bob', ip: '73.162.20.2' })
    expect(b.device?.['resolved_id']).not.toBe(ia)
    await score({ device_id: 'fp-O', user_id: 'bob', ip: '73.162.20.2', device_token: b.device_token })
    const alice = await score({ device_id: 'fp-O', user_id: 'alice', ip: '73.162.20.3' })
    // Two people's tokens were replayed with fp-O now: it is known to collide, so even its own
    // user (and an anonymous visitor) gets a new identity on that network.
    expect(alice.device?.['resolved_id']).not.toBe(ia)
    const anon = await score({ device_id: 'fp-O', ip: '73.162.20.4' })
    expect([ia, carried(b), carried(alice)]).not.toContain(anon.device?.['resolved_id'])
    // Before any collision a returning user does get the identity back.
    const c = await score({ device_id: 'fp-Q', user_id: 'carol', ip: '73.162.21.1' })
    const back = await score({ device_id: 'fp-Q', user_id: 'carol', ip: '73.162.21.9' })
    expect(carried(back)).toBe(carried(c))

    // Six strangers with one phone model, each replaying their own token: a seventh signs up
    // without a cookie. The fingerprint counts accounts per known device, so no reuse fires.
    for (let i = 0; i < 6; i++) {
      const ip = `79.203.${i}.1`
      const first = await score({ device_id: 'fp-phone', user_id: `p${i}`, ip })
      await score({ device_id: 'fp-phone', user_id: `p${i}`, ip, device_token: first.device_token })
    }
    const seventh = await score({ device_id: 'fp-phone', user_id: 'p6', ip: '79.203.9.1' })
    expect(seventh.device).toMatchObject({ resolution_rung: 2, account_count: 7 })
    expect(reuse(seventh)).toBeUndefined()
    // Accounts piling up on one network of such a fingerprint (one person's signups without the
    // cookie) still corroborate: the same-network count is not divided by the known devices.
    for (let i = 0; i < 3; i++) {
      const ip = `79.206.${i}.1`
      const first = await score({ device_id: 'fp-promo', user_id: `q${i}`, ip })
      await score({ device_id: 'fp-promo', user_id: `q${i}`, ip, device_token: first.device_token })
    }
    let pile: Body | null = null
    for (let i = 0; i < 5; i++)
      pile = await score({ device_id: 'fp-promo', user_id: `v${i}`, ip: `79.206.9.${i + 1}` })
    expect(pile!.device).toMatchObject({ account_count: 8, account_count_same_network: 5 })
    expect(reuse(pile!)).toMatchObject({ weight: 25 })
    // A rare fingerprint (no token ever replayed) with many accounts over many networks still counts.
    let last: Body | null = null
    for (let i = 0; i < 10; i++)
      last = await score({ device_id: 'fp-farm', user_id: `f${i}`, ip: `79.204.${i}.1` })
    expect(reuse(last!)).toMatchObject({ weight: 45 })
    // The same spread on a fingerprint the client reports as standardised (resistFingerprinting):
    // it collides by construction, so only the accounts of its own network count.
    const rfp = { is_font_standardized: true }
    for (let i = 0; i < 10; i++)
      last = await score({ device_id: 'fp-rfp', user_id: `r${i}`, ip: `79.205.${i}.1`, device: rfp })
    expect(reuse(last!)).toBeUndefined()
    await score({ device_id: 'fp-rfp', user_id: 'r10', ip: '79.205.0.2', device: rfp })
    const third = await score({ device_id: 'fp-rfp', user_id: 'r11', ip: '79.205.0.3', device: rfp })
    expect(third.device).toMatchObject({ account_count: 12, account_count_same_network: 3 })
    expect(reuse(third)).toMatchObject({ weight: 25 })
  })

  // Issue 27: one person's accounts made with aliases of one mailbox on a fingerprint known to collide
  // count undivided, at rung 2 and at rung 1 (the promo abuser who clears the cookie between signups).
  run("a colliding fingerprint's accounts on one mailbox count undivided", async () => {
    await setup()
    const reuse = (b: Body) =>
      (
        b as unknown as { checks: { reason: string; weight: number; evidence: Record<string, unknown> }[] }
      ).checks.find((c) => c.reason === 'device_reuse')
    /** Two strangers replay their own tokens with `fp`: it is known to collide (2 known devices). */
    const strangers = async (fp: string, net: number) => {
      for (let i = 0; i < 2; i++) {
        const ip = `79.${net}.${i}.1`
        const user = `${fp}-s${i}`
        const first = await score({ device_id: fp, user_id: user, ip, email: `${user}@example.org` })
        await score({
          device_id: fp,
          user_id: user,
          ip,
          email: `${user}@example.org`,
          device_token: first.device_token,
        })
      }
    }
    /** Four signups without the cookie on one home network, then the fourth account's checkout with its token. */
    const signups = async (fp: string, net: number, emails: string[]) => {
      let last: Body | null = null
      for (const [i, email] of emails.entries()) {
        h.clock.advance(60_000)
        last = await score({
          event: 'signup',
          device_id: fp,
          user_id: `${fp}-a${i}`,
          ip: `79.${net}.9.${i + 1}`,
          email,
        })
      }
      h.clock.advance(60_000)
      const checkout = await score({
        event: 'checkout',
        device_id: fp,
        user_id: `${fp}-a${emails.length - 1}`,
        ip: `79.${net}.9.9`,
        email: emails[emails.length - 1],
        device_token: last!.device_token,
      })
      return { signup: last!, checkout }
    }
    // Different mailboxes: 6 accounts over 2 known devices count 3, low tier, corroborated by the 4
    // accounts on the network: 25. The checkout's token carries its own account only: nothing.
    await strangers('fp-other', 208)
    const other = await signups('fp-other', 208, [
      'ann@example.org',
      'bob@example.org',
      'cy@example.org',
      'di@example.org',
    ])
    expect(other.signup.device).toMatchObject({
      resolution_rung: 2,
      account_count: 6,
      account_count_same_network: 4,
    })
    expect(reuse(other.signup)).toMatchObject({ weight: 25, evidence: { accounts: 3 } })
    expect(reuse(other.signup)?.evidence).not.toHaveProperty('accounts_same_mailbox')
    expect(other.checkout.device).toMatchObject({ resolution_rung: 1 })
    expect(reuse(other.checkout)).toBeUndefined()
    // Aliases of one Gmail mailbox: the 4 accounts on it count undivided, medium tier: 30 + 10.
    await strangers('fp-alias', 209)
    const alias = await signups('fp-alias', 209, [
      'john.smith@gmail.com',
      'johnsmith+1@gmail.com',
      'j.ohn.smith@googlemail.com',
      'johnsmith+deal@gmail.com',
    ])
    expect(alias.signup.device).toMatchObject({ resolution_rung: 2, account_count: 6 })
    expect(reuse(alias.signup)).toMatchObject({
      weight: 40,
      evidence: { accounts: 4, accounts_same_mailbox: 4 },
    })
    expect(alias.checkout.device).toMatchObject({ resolution_rung: 1 })
    expect(reuse(alias.checkout)).toMatchObject({
      weight: 40,
      evidence: { accounts: 4, accounts_same_mailbox: 4 },
    })
    // The decision replays from its recorded input, the mailbox count included.
    for (const b of [alias.signup, alias.checkout]) {
      const replay = await h.app.inject({
        method: 'POST',
        url: '/v1/replay',
        headers: t.headers,
        payload: { event_id: (b as unknown as { event_id: string }).event_id },
      })
      expect(replay.json()).toMatchObject({ identical: true })
    }
    // The mailbox's accounts on another fingerprint are not this device's.
    const elsewhere = await score({
      event: 'signup',
      device_id: 'fp-laptop',
      user_id: 'fp-alias-a9',
      ip: '79.210.0.1',
      email: 'johnsmith+9@gmail.com',
    })
    expect(reuse(elsewhere)).toBeUndefined()
  })
})
