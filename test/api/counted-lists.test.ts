import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { recordedAttributeCounts, enforcedRule as rule } from '../helpers/rules.js'

const hasPg = await pgAvailable()
const MIN = 60_000

/** Counts of one figure set, as the recorded input holds them. */
const counts = (accounts: number, events: number) => ({
  accounts_10m: accounts,
  accounts_1h: accounts,
  accounts_24h: accounts,
  events_10m: events,
  events_1h: events,
  events_24h: events,
})

describe.each<Engine>(['sqlite', 'postgres'])('counted attributes holding lists on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const api = (method: 'PUT' | 'POST', url: string, payload: object) =>
    h.app.inject({ method, url, headers: t.headers, payload })
  const score = async (user: string, attributes: object) => {
    const r = await api('POST', '/v1/score', { event: 'signup', user_id: user, attributes })
    expect(r.statusCode, r.body).toBe(200)
    return r.json()
  }
  const countsOf = (eventId: string) => recordedAttributeCounts(h, eventId)

  run('counts each string of a list; a rule reads, figure by figure, the most shared one', async () => {
    h = await build({ engine })
    h.clock.set(1_800_000_000_000)
    t = await h.tenant()
    const saved = await api('PUT', '/v1/config', {
      attributes: { addresses: { hashed: true, counted: true }, tags: { counted: true } },
      rules: [
        rule('shared_address', 'has(counts.addresses) && counts.addresses.accounts_24h >= 2', {
          verdict: 'review',
        }),
      ],
    })
    expect(saved.statusCode, saved.body).toBe(200)
    const a = await score('u1', { addresses: ['Addr-A', 'Addr-B'], tags: ['x'] })
    expect(await countsOf(a.event_id)).toEqual({ addresses: counts(1, 1), tags: counts(1, 1) })
    expect(a.reasons).toEqual([])
    h.clock.advance(MIN)
    // Addr-B is shared with u1 (2 accounts, 2 events); Addr-C is new: the event reads Addr-B's figures.
    const b = await score('u2', { addresses: ['Addr-C', 'Addr-B'] })
    expect((await countsOf(b.event_id)).addresses).toEqual(counts(2, 2))
    expect(b.reasons).toEqual(['rule:shared_address'])
    expect(b.checks[0].evidence).toMatchObject({ 'counts.addresses.accounts_24h': 2 })
    // Figure by figure: Addr-C has the most accounts (u2, u5, u3), Addr-D the most events (u9's 3, u3's).
    h.clock.advance(MIN)
    await score('u5', { addresses: ['Addr-C'] })
    for (let k = 0; k < 3; k++) await score('u9', { addresses: ['Addr-D'] })
    const c = await score('u3', { addresses: ['Addr-C', 'Addr-D', 'Addr-D'] })
    expect((await countsOf(c.event_id)).addresses).toEqual(counts(3, 4))
    // A string twice in one list counts once: Addr-D has 5 events now, not 6.
    const d = await score('u4', { addresses: ['Addr-D'] })
    expect((await countsOf(d.event_id)).addresses).toMatchObject({ accounts_24h: 3, events_24h: 5 })
    // An empty list counts nothing: no counts.addresses, the rule does not hold.
    const e = await score('u1', { addresses: [] })
    expect(await countsOf(e.event_id)).toBeUndefined()
    expect(e.reasons).toEqual([])
    expect((await api('POST', '/v1/replay', { event_id: b.event_id })).json().identical).toBe(true)
    expect((await api('POST', '/v1/replay', { event_id: c.event_id })).json().identical).toBe(true)
    // Stored per string under its keyed hash: no string rests raw.
    const rows = JSON.stringify([
      await h.store.db.all('SELECT * FROM attribute_accounts'),
      await h.store.db.all('SELECT * FROM attribute_events'),
    ])
    expect(rows).not.toMatch(/Addr-/)
    const values = await h.store.db.all<{ n: number }>(
      "SELECT COUNT(DISTINCT value_hash) AS n FROM attribute_events WHERE attribute = 'addresses'",
    )
    expect(Number(values[0]!.n)).toBe(4)
  })

  run('erasing an account deletes its rows for every string of its lists, and only those', async () => {
    h = await build({ engine })
    h.clock.set(1_800_000_000_000)
    t = await h.tenant()
    await api('PUT', '/v1/config', { attributes: { addresses: { counted: true } } })
    await score('gone', { addresses: ['Addr-A', 'Addr-B'] })
    await score('stays', { addresses: ['Addr-B'] })
    const accounts = async () =>
      (
        await h.store.db.all<{ account: string }>(
          'SELECT account FROM attribute_accounts ORDER BY account, value_hash',
        )
      ).map((r) => r.account)
    expect(await accounts()).toEqual(['gone', 'gone', 'stays'])
    expect((await api('POST', '/v1/forget', { user_id: 'gone' })).statusCode).toBe(200)
    expect(await accounts()).toEqual(['stays'])
    // The erased account no longer counts: Addr-B has 'stays' and the new account.
    const next = await score('new', { addresses: ['Addr-B', 'Addr-A'] })
    expect((await countsOf(next.event_id)).addresses).toMatchObject({ accounts_24h: 2 })
  })
})
