import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { recordedAttributeCounts, enforcedRule as rule } from '../helpers/rules.js'

const hasPg = await pgAvailable()
const MIN = 60_000

describe.each<Engine>(['sqlite', 'postgres'])('hashed and counted attributes on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    h.clock.set(1_800_000_000_000)
    t = await h.tenant()
  }
  const api = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
  const score = async (body: object) => {
    const r = await api('POST', '/v1/score', { event: 'checkout', ...body })
    expect(r.statusCode, r.body).toBe(200)
    return r.json()
  }
  const countsOf = (eventId: string) => recordedAttributeCounts(h, eventId)

  run('declares attributes in the config as a new version; GET shows them; {} removes them', async () => {
    await setup()
    const res = await api('PUT', '/v1/config', {
      attributes: { card_fp: { hashed: true, counted: true }, referral: { counted: true } },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().version).toBe(1)
    const got = (await api('GET', '/v1/config')).json()
    expect(got.overrides.attributes).toEqual({
      card_fp: { hashed: true, counted: true },
      referral: { counted: true },
    })
    expect(got.effective.attributes).toEqual(got.overrides.attributes)
    expect(
      (
        await api('PUT', '/v1/config', {
          attributes: { card_fp: { hashed: true, counted: true }, referral: { counted: true } },
        })
      ).json().version,
    ).toBe(1)
    const removed = await api('PUT', '/v1/config', { attributes: {} })
    expect(removed.json().version).toBe(2)
    expect(removed.json().overrides.attributes).toBeUndefined()
  })

  run(
    'bounds: at most 5 counted, 32 declared, keys and fields as documented, each a 400 naming the field',
    async () => {
      await setup()
      const six = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((k) => [k, { counted: true }]))
      const tooMany = await api('PUT', '/v1/config', { attributes: six })
      expect(tooMany.statusCode).toBe(400)
      expect(tooMany.json().error).toBe('attributes: at most 5 counted attributes, not 6 (a, b, c, d, e, f)')
      const five = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [k, { counted: true }]))
      expect((await api('PUT', '/v1/config', { attributes: five })).statusCode).toBe(200)
      const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, { hashed: true }]))
      const r33 = await api('PUT', '/v1/config', { attributes: many })
      expect(r33.statusCode).toBe(400)
      expect(r33.json().error).toContain('body.attributes')
      for (const attributes of [
        { Card: { hashed: true } },
        { card: { hashed: 'yes' } },
        { card: { salted: true } },
      ]) {
        const r = await api('PUT', '/v1/config', { attributes })
        expect(r.statusCode, JSON.stringify(attributes)).toBe(400)
        expect(r.json().error, JSON.stringify(attributes)).toContain('body.attributes')
      }
    },
  )

  run(
    'a hashed attribute is recorded and evaluated only as its keyed hash; equality between values works',
    async () => {
      await setup()
      await api('PUT', '/v1/config', {
        attributes: { card_fp: { hashed: true }, last_card_fp: { hashed: true } },
        rules: [
          rule(
            'card_changed',
            'has(event.attributes.card_fp) && event.attributes.card_fp != event.attributes.last_card_fp',
          ),
          rule('known_card', 'event.attributes.card_fp in event.attributes.cards'),
        ],
      })
      const same = await score({
        user_id: 'u1',
        attributes: { card_fp: 'RAW-CARD-1', last_card_fp: 'RAW-CARD-1' },
      })
      expect(same.reasons).toEqual([])
      const changed = await score({
        user_id: 'u1',
        attributes: { card_fp: 'RAW-CARD-2', last_card_fp: 'RAW-CARD-1' },
      })
      expect(changed.reasons).toEqual(['rule:card_changed'])
      // The evidence names the hashes, never the values.
      const evidence = JSON.stringify(changed.checks)
      expect(evidence).not.toContain('RAW-CARD')
      expect(changed.checks[0].evidence['event.attributes.card_fp']).toMatch(/^[0-9a-f]{64}$/)
      const row = await h.store.db.get<{ inputs: string }>('SELECT inputs FROM events WHERE id = ?', [
        changed.event_id,
      ])
      expect(row!.inputs).not.toContain('RAW-CARD')
      // Replay decides it again identically from the recorded hashes.
      expect((await api('POST', '/v1/replay', { event_id: changed.event_id })).json().identical).toBe(true)
    },
  )

  run(
    'refuses a rule that uses a hashed attribute other than for equality, naming rule and position',
    async () => {
      await setup()
      await api('PUT', '/v1/config', { attributes: { card_fp: { hashed: true } } })
      for (const [when, problem, at] of [
        [
          "event.attributes.card_fp.startsWith('4')",
          'compare it only with ==, != or in, or test it with has()',
          0,
        ],
        ['size(event.attributes.card_fp) > 3', 'compare it only with ==, != or in, or test it with has()', 5],
        [
          'event.attributes.card_fp == 4111',
          'its value is a keyed hash: compare it with a string (hashed when the rule is saved) or another value, not this literal',
          28,
        ],
        ["event.attributes['card_fp'] > 'a'", 'compare it only with ==, != or in, or test it with has()', 0],
      ] as const) {
        const r = await api('PUT', '/v1/config', { rules: [rule('r', when)] })
        expect(r.statusCode, when).toBe(400)
        expect(r.json().error, when).toBe(
          `rules[0] (r): event.attributes.card_fp is hashed: ${problem} at position ${at}`,
        )
      }
      // Declaring an attribute hashed is refused while a rule still uses it otherwise.
      await api('PUT', '/v1/config', {
        attributes: {},
        rules: [rule('bin', "event.attributes.card_bin.startsWith('4')")],
      })
      const late = await api('PUT', '/v1/config', { attributes: { card_bin: { hashed: true } } })
      expect(late.statusCode).toBe(400)
      expect(late.json().error).toMatch(/^rules\[0\] \(bin\): event\.attributes\.card_bin is hashed/)
    },
  )

  run('counts distinct accounts and events per value over 10 minutes, 1 hour and 24 hours', async () => {
    await setup()
    await api('PUT', '/v1/config', {
      attributes: { card_fp: { hashed: true, counted: true }, referral: { counted: true } },
      rules: [
        rule('card_farm', 'counts.card_fp.accounts_24h >= 3', { verdict: 'review' }),
        rule('referred', 'has(counts.referral) && counts.referral.events_24h >= 1', { score: 1 }),
      ],
    })
    const a = await score({ user_id: 'u1', attributes: { card_fp: 'C1', referral: 'R' } })
    expect(await countsOf(a.event_id)).toEqual({
      card_fp: {
        accounts_10m: 1,
        accounts_1h: 1,
        accounts_24h: 1,
        events_10m: 1,
        events_1h: 1,
        events_24h: 1,
      },
      referral: {
        accounts_10m: 1,
        accounts_1h: 1,
        accounts_24h: 1,
        events_10m: 1,
        events_1h: 1,
        events_24h: 1,
      },
    })
    expect(a.reasons).toEqual(['rule:referred'])
    // The same account again: one account, two events; without a referral there is no counts.referral.
    const b = await score({ user_id: 'u1', attributes: { card_fp: 'C1' } })
    expect(b.reasons).toEqual([])
    expect((await countsOf(b.event_id)).card_fp).toMatchObject({ accounts_10m: 1, events_10m: 2 })
    expect(b.verdict).toBe('allow')
    h.clock.advance(11 * MIN)
    const c = await score({ user_id: 'u2', attributes: { card_fp: 'C1' } })
    expect((await countsOf(c.event_id)).card_fp).toEqual({
      accounts_10m: 1,
      accounts_1h: 2,
      accounts_24h: 2,
      events_10m: 1,
      events_1h: 3,
      events_24h: 3,
    })
    // Another card is counted on its own; an event without an account counts as an event only.
    const other = await score({ user_id: 'u9', attributes: { card_fp: 'C2' } })
    expect((await countsOf(other.event_id)).card_fp).toMatchObject({ accounts_24h: 1, events_24h: 1 })
    const anon = await score({ attributes: { card_fp: 'C1' } })
    expect((await countsOf(anon.event_id)).card_fp).toMatchObject({ accounts_24h: 2, events_24h: 4 })
    h.clock.advance(2 * 60 * MIN)
    const d = await score({ user_id: 'u3', attributes: { card_fp: 'C1' } })
    expect((await countsOf(d.event_id)).card_fp).toEqual({
      accounts_10m: 1,
      accounts_1h: 1,
      accounts_24h: 3,
      events_10m: 1,
      events_1h: 1,
      events_24h: 5,
    })
    // The third account on one card within a day: the rule reads the count.
    expect(d.reasons).toEqual(['rule:card_farm'])
    expect(d.checks[0].evidence).toEqual({ 'counts.card_fp.accounts_24h': 3 })
    expect((await api('POST', '/v1/replay', { event_id: d.event_id })).json().identical).toBe(true)
    // A day later nothing of it counts, and the trim job deletes it.
    h.clock.advance(25 * 60 * MIN)
    const e = await score({ user_id: 'u4', attributes: { card_fp: 'C1' } })
    expect((await countsOf(e.event_id)).card_fp).toMatchObject({ accounts_24h: 1, events_24h: 1 })
    h.clock.advance(26 * 60 * MIN)
    await h.jobs.runNow('velocity-trim')
    const left = await h.store.db.all('SELECT * FROM attribute_accounts')
    expect(left).toEqual([])
    expect(await h.store.db.all('SELECT * FROM attribute_events')).toEqual([])
    // Stored under keyed hashes only.
    expect(JSON.stringify(await h.store.db.all('SELECT * FROM attribute_events'))).not.toContain('C1')
  })

  run('counted values are stored as keyed hashes, and erasing an account deletes its rows', async () => {
    await setup()
    await api('PUT', '/v1/config', { attributes: { referral: { counted: true } } })
    await score({ user_id: 'gone', attributes: { referral: 'FRIEND-CODE-9' } })
    await score({ user_id: 'stays', attributes: { referral: 'FRIEND-CODE-9' } })
    const dump = JSON.stringify([
      await h.store.db.all('SELECT * FROM attribute_accounts'),
      await h.store.db.all('SELECT * FROM attribute_events'),
    ])
    expect(dump).not.toContain('FRIEND-CODE-9')
    expect((await api('POST', '/v1/forget', { user_id: 'gone' })).statusCode).toBe(200)
    const accounts = await h.store.db.all<{ account: string }>('SELECT account FROM attribute_accounts')
    expect(accounts.map((r) => r.account)).toEqual(['stays'])
  })
})
