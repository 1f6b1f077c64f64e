import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
let t: TestTenant
beforeEach(async () => {
  h = await build()
  t = await h.tenant()
})
afterEach(async () => {
  await h.close()
})

const fired = async (payload: Record<string, unknown>): Promise<Record<string, number>> => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  const body = res.json() as { checks: { reason: string; weight: number }[] }
  return Object.fromEntries(body.checks.map((c) => [c.reason, c.weight]))
}

const US = '73.162.10.20'
const DE = '79.198.10.20'
const DAY = 86_400_000

describe('mailbox_reuse', () => {
  it('counts accounts on one canonical mailbox across its aliases: 2 → 25, 4 → 45', async () => {
    const spellings = [
      'john.smith@gmail.com',
      'johnsmith+deal@gmail.com',
      'j.ohnsmith@googlemail.com',
      'johnsmith+x@gmail.com',
    ]
    const seen: (number | undefined)[] = []
    for (const [i, email] of spellings.entries()) {
      seen.push((await fired({ event: 'signup', user_id: `promo-${i}`, email, ip: US }))['mailbox_reuse'])
      h.clock.advance(60_000)
    }
    expect(seen).toEqual([undefined, 25, 25, 45])
    // The same account again is not another account; another mailbox is unaffected.
    expect(
      (await fired({ event: 'login', user_id: 'promo-0', email: 'john.smith@gmail.com', ip: US }))[
        'mailbox_reuse'
      ],
    ).toBe(45)
    expect(
      await fired({ event: 'signup', user_id: 'other', email: 'maria@example.com', ip: US }),
    ).not.toHaveProperty('mailbox_reuse')
  })

  it('follows the tenant weights and tier boundary', async () => {
    const res = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { weights: { mailboxReuseMed: 30 }, thresholds: { mailboxReuseHigh: 3 } },
    })
    expect(res.statusCode, res.body).toBe(200)
    await fired({ event: 'signup', user_id: 'a', email: 'ann@example.com' })
    expect(
      (await fired({ event: 'signup', user_id: 'b', email: 'ann+1@example.com' }))['mailbox_reuse'],
    ).toBe(30)
    expect(
      (await fired({ event: 'signup', user_id: 'c', email: 'ann+2@example.com' }))['mailbox_reuse'],
    ).toBe(45)
  })
})

describe('account_takeover', () => {
  /** An account with two events a day apart from home on one fingerprint. */
  async function establish(user: string): Promise<void> {
    await fired({ event: 'signup', user_id: user, ip: US, device_id: 'fp-home' })
    h.clock.advance(DAY)
    await fired({ event: 'login', user_id: user, ip: US, device_id: 'fp-home' })
    h.clock.advance(DAY)
  }

  it('fires for an established account on a new device from a new country, on logins and checkouts', async () => {
    await establish('u1')
    expect(
      (await fired({ event: 'login', user_id: 'u1', ip: DE, device_id: 'fp-new', event_country: 'US' }))[
        'account_takeover'
      ],
    ).toBe(35)
    h.clock.advance(60_000)
    expect(
      (await fired({ event: 'checkout', user_id: 'u1', ip: DE, device_id: 'fp-other' }))['account_takeover'],
    ).toBe(35)
  })

  it('stays quiet for one novelty alone, for new accounts and for signups', async () => {
    await establish('u2')
    // A trip on a known device, a new phone at home.
    expect(await fired({ event: 'login', user_id: 'u2', ip: DE, device_id: 'fp-home' })).not.toHaveProperty(
      'account_takeover',
    )
    expect(
      await fired({ event: 'login', user_id: 'u3-unknown', ip: DE, device_id: 'fp-x' }),
    ).not.toHaveProperty('account_takeover')
    await establish('u4')
    expect(await fired({ event: 'login', user_id: 'u4', ip: US, device_id: 'fp-phone' })).not.toHaveProperty(
      'account_takeover',
    )
    expect(await fired({ event: 'signup', user_id: 'u4', ip: DE, device_id: 'fp-y' })).not.toHaveProperty(
      'account_takeover',
    )
    // Two events within the same day are not an established account yet.
    await fired({ event: 'signup', user_id: 'u5', ip: US, device_id: 'fp-a' })
    await fired({ event: 'login', user_id: 'u5', ip: US, device_id: 'fp-a' })
    h.clock.advance(3_600_000)
    expect(await fired({ event: 'login', user_id: 'u5', ip: DE, device_id: 'fp-b' })).not.toHaveProperty(
      'account_takeover',
    )
  })
})
