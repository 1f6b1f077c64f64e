import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { unpackJson } from '../../src/store/events/compact-json.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const IP = '73.162.10.20'
const OTHER_IP = '79.200.1.1'

/** IP velocity reads a maintained aggregate (ip_accounts); erasure must leave it as if the erased events never were. */
describe.each<Engine>(['sqlite', 'postgres'])('IP velocity after erasure on %s', (engine) => {
  const skip = engine === 'postgres' && !hasPg
  let h: Harness
  let t: TestTenant
  beforeEach(async () => {
    if (skip) return
    h = await build({ engine })
    t = await h.tenant()
  })
  afterEach(async () => {
    await h?.close()
  })

  const score = async (body: object) => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload: body })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }
  /** Scores `user` on the IP; returns how many accounts the engine was told the IP has. */
  const accounts = async (user: string) =>
    count((await score({ event: 'login', ip: IP, user_id: user })).event_id)
  // The count the engine was given, recorded with the event (also when ip_velocity did not fire).
  const count = async (eventId: string) => {
    const row = await h.store.db.get<{ inputs: string }>(
      'SELECT inputs FROM events WHERE tenant_id = ? AND id = ?',
      [t.tenantId, eventId],
    )
    return unpackJson<{ history: { ipAccounts: number } }>(row!.inputs).history.ipAccounts
  }
  const pairs = async () =>
    (
      await h.store.db.all<{ user_id: string }>(
        'SELECT user_id FROM ip_accounts WHERE tenant_id = ? ORDER BY user_id',
        [t.tenantId],
      )
    ).map((r) => r.user_id)
  const forget = async (body: object) => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/forget', headers: t.headers, payload: body })
    expect(res.statusCode, res.body).toBe(200)
  }

  it.skipIf(skip)(
    'an erased email takes its events out of the count; the account’s other events stay',
    async () => {
      await score({ event: 'signup', ip: IP, user_id: 'ann' })
      await score({ event: 'signup', ip: IP, user_id: 'bob', email: 'bob.erased@example.com' })
      h.clock.advance(1000)
      await score({ event: 'signup', ip: IP, user_id: 'cat', email: 'cat.erased@example.com' })
      h.clock.advance(1000)
      await score({ event: 'login', ip: IP, user_id: 'cat' })
      expect(await pairs()).toEqual(['ann', 'bob', 'cat'])
      await forget({ email: 'bob.erased@example.com' })
      await forget({ email: 'cat.erased@example.com' })
      // bob had only the erased event; cat still has a login on the IP.
      expect(await pairs()).toEqual(['ann', 'cat'])
      expect(await accounts('dan')).toBe(3)
    },
  )

  it.skipIf(skip)('erasing an IP or an account removes its pairs whatever else remains', async () => {
    for (const user of ['ann', 'bob', 'cat']) await score({ event: 'signup', ip: IP, user_id: user })
    await score({ event: 'signup', ip: OTHER_IP, user_id: 'bob' })
    await forget({ user_id: 'bob' })
    expect(await pairs()).toEqual(['ann', 'cat'])
    await forget({ ip: IP })
    expect(await pairs()).toEqual([])
    expect(await accounts('dan')).toBe(1)
  })

  it.skipIf(skip)(
    'a pair rederived after erasure keeps the time of the account’s latest remaining event',
    async () => {
      await score({ event: 'signup', ip: IP, user_id: 'ann' })
      h.clock.advance(9 * 60_000)
      await score({ event: 'login', ip: IP, user_id: 'ann', email: 'ann.late@example.com' })
      await forget({ email: 'ann.late@example.com' })
      // ann's remaining event is 9 minutes old: 2 more minutes and it leaves the window.
      h.clock.advance(2 * 60_000)
      expect(await accounts('bob')).toBe(1)
    },
  )

  it.skipIf(skip)(
    'IPv6: one /64 is one velocity key; erasing one address re-derives the block from the rest',
    async () => {
      const V6 = (host: string) => `2001:db8:42:7:${host}`
      await score({ event: 'signup', ip: V6('1::1'), user_id: 'ann' })
      await score({ event: 'signup', ip: V6('2::2'), user_id: 'bob' })
      await score({ event: 'signup', ip: V6('3::3'), user_id: 'bob' })
      // Another /64 of the same /48 is another subscriber.
      await score({ event: 'signup', ip: '2001:db8:42:8::1', user_id: 'cat' })
      const v6 = async (user: string, host: string) =>
        count((await score({ event: 'login', ip: V6(host), user_id: user })).event_id)
      expect(await v6('eve', 'ffff::9')).toBe(3)
      await forget({ ip: V6('2::2') })
      // bob keeps his event on 3::3, so the block still counts him.
      expect(await v6('fay', 'eeee::8')).toBe(4)
      await forget({ ip: V6('3::3') })
      expect(await v6('gus', 'dddd::7')).toBe(4)
      const blockRows = await h.store.db.all<{ user_id: string }>(
        'SELECT user_id FROM ip_accounts WHERE tenant_id = ? AND user_id IN (?, ?) ORDER BY user_id',
        [t.tenantId, 'bob', 'cat'],
      )
      expect(blockRows.map((r) => r.user_id)).toEqual(['cat'])
    },
  )
})
