import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
let t: TestTenant
beforeEach(async () => {
  h = await build()
  t = await h.tenant({ shareNetwork: true })
})
afterEach(async () => {
  await h.close()
})

const post = (url: string, payload: object, headers = t.headers) =>
  h.app.inject({ method: 'POST', url, headers, payload })

describe('POST /v1/subject and /v1/forget', () => {
  const USER = 'zz-distinctive-user-8812'
  const EMAIL = 'Quentin.Xylophone+shop@gmail.com'
  const DEVICE = 'fp-distinctive-device-7731'

  async function seed(withLabel = true) {
    for (let i = 0; i < 3; i++) {
      await post('/v1/score', {
        event: 'signup',
        user_id: USER,
        email: EMAIL,
        ip: '73.162.10.20',
        phone: '+44 20 7946 0777',
        device_id: DEVICE,
      })
    }
    await post('/v1/score', { event: 'login', user_id: 'someone-else', email: 'other@example.com' })
    await post('/v1/check/email', { email: 'quentinxylophone@gmail.com' })
    await post('/v1/lists', { list: 'block', type: 'email', value: 'quentin.xylophone@googlemail.com' })
    await post('/v1/lists', { list: 'allow', type: 'user', value: USER })
    const ev = (await h.app.inject({ url: `/v1/events?q=${USER}`, headers: t.headers })).json().events[0]
    if (withLabel) await post('/v1/label', { label: 'fraud', event_id: ev.id, note: 'chargeback filed' })
    else await post('/v1/label', { label: 'chargeback', entities: { email: 'quentin.xylophone@gmail.com' } })
  }

  it('exports everything the tenant holds about the person, alias-aware, with counts', async () => {
    await seed()
    const res = await post('/v1/subject', { email: 'quentinxylophone@googlemail.com' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.counts).toEqual({
      events: 3,
      lookups: 1,
      list_entries: 1,
      labels: 1,
      device_observations: 3,
      devices: 1,
      beacons: 0,
      idempotent_responses: 0,
    })
    expect(body.device_observations[0]).toMatchObject({
      deviceId: DEVICE,
      ipPrefix: '73.162.10.0/24',
      rung: 2,
    })
    expect(body.devices[0]).toMatchObject({ observations: 3, distinctIps: 1, accounts: 1 })
    expect(body.events[0]).toMatchObject({ userId: USER, emailDomain: 'gmail.com' })
    expect(JSON.stringify(body)).not.toContain('Quentin')
    const byUser = (await post('/v1/subject', { user_id: USER, limit: 2 })).json()
    expect(byUser.counts.events).toBe(3)
    expect(byUser.events).toHaveLength(2)
    expect(byUser.list_entries).toHaveLength(1)
    const other = await h.tenant()
    expect((await post('/v1/subject', { user_id: USER }, other.headers)).json().counts.events).toBe(0)
  })

  it('validates the identifiers and the limit', async () => {
    expect((await post('/v1/subject', {})).statusCode).toBe(400)
    expect((await post('/v1/subject', { user_id: 'x', limit: 0 })).json().error).toContain('body.limit')
    expect((await post('/v1/subject', { user_id: 'x', limit: 5000 })).statusCode).toBe(200)
    expect((await post('/v1/subject', { user_id: 'x', limit: 5001 })).statusCode).toBe(400)
    expect((await post('/v1/forget', { user_id: 'x', limit: 5 })).json().error).toContain('body.limit')
    expect((await post('/v1/forget', { ip: 'not-ip' })).statusCode).toBe(400)
    expect((await post('/v1/forget', { user_id: 'u'.repeat(257) })).statusCode).toBe(400)
  })

  it('erases by an alias spelling so that nothing of the person is left in any file of the database', async () => {
    // A fraud label would put the email's hash into the shared network, which erasure never scrubs
    // (tested below); here the label carries the entity locally only.
    await seed(false)
    // The storage forms too: a leftover hash identifies the person as well as the raw value would.
    const needles = [
      USER,
      DEVICE,
      'quentin',
      'Quentin',
      'xylophone',
      h.hasher.entity('email', 'quentinxylophone@gmail.com'),
      h.hasher.entity('phone', '+442079460777'),
      h.hasher.entity('ip', '73.162.10.20'),
    ]
    const files = () => readdirSync(h.dir).filter((f) => f.startsWith('verdict.db'))
    const found = () => {
      const seen = new Set<string>()
      for (const f of files()) {
        const bytes = readFileSync(join(h.dir, f))
        for (const needle of needles) if (bytes.includes(Buffer.from(needle))) seen.add(needle)
      }
      return [...seen].sort()
    }
    // The user and device ids and the three storage hashes are on disk before erasure (the raw email
    // never is), so their absence afterwards proves the erasure, not a wrong needle.
    expect(found()).toEqual([USER, DEVICE, ...needles.slice(5)].sort())
    const res = await post('/v1/forget', {
      ip: '73.162.10.20',
      phone: '+44 20 7946 0777',
      email: 'QUENTINXYLOPHONE+other@googlemail.com',
      user_id: USER,
      device_id: DEVICE,
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      deleted: {
        events: 3,
        lookups: 1,
        list_entries: 2,
        listEntries: 2,
        labels: 1,
        observations: 3,
        idempotent_responses: 0,
      },
      suppressions: 5,
      storage: 'reclaimed',
    })
    expect(files()).toContain('verdict.db')
    expect(found()).toEqual([])
    // Nothing comes back through the API either, and the other person is untouched.
    expect((await h.app.inject({ url: `/v1/events?q=${USER}`, headers: t.headers })).json().total).toBe(0)
    expect((await post('/v1/subject', { email: EMAIL })).json().counts).toEqual({
      events: 0,
      lookups: 0,
      list_entries: 0,
      labels: 0,
      device_observations: 0,
      devices: 0,
      beacons: 0,
      idempotent_responses: 0,
    })
    const obs = (await h.app.inject({ url: `/v1/device/${DEVICE}/observations`, headers: t.headers })).json()
    expect(obs.observations).toEqual([])
    expect((await h.app.inject({ url: '/v1/events', headers: t.headers })).json().total).toBe(1)
    const sup = (await h.app.inject({ url: '/v1/suppressions', headers: t.headers })).json().suppressions
    expect(
      sup.map((s: { action: string; entityType: string }) => `${s.action}:${s.entityType}`).sort(),
    ).toEqual(['forget:device', 'forget:email', 'forget:ip', 'forget:phone', 'forget:user'])
  })

  it('never scrubs the shared network: a contributed fraud flag stays after erasure', async () => {
    await seed()
    const before = (await h.store.db.all('SELECT * FROM network_flags')).length
    expect(before).toBeGreaterThan(0)
    await post('/v1/forget', { email: EMAIL, user_id: USER })
    expect((await h.store.db.all('SELECT * FROM network_flags')).length).toBe(before)
  })

  it("cannot reach another tenant's rows", async () => {
    await seed()
    const other = await h.tenant()
    const res = await post('/v1/forget', { user_id: USER, email: EMAIL }, other.headers)
    expect(res.json().deleted).toEqual({
      events: 0,
      lookups: 0,
      list_entries: 0,
      listEntries: 0,
      labels: 0,
      observations: 0,
      idempotent_responses: 0,
    })
    expect((await post('/v1/subject', { user_id: USER })).json().counts.events).toBe(3)
  })
})

describe('GET /v1/suppressions', () => {
  it('lists newest first with a limit up to 500 (default 100)', async () => {
    for (let i = 0; i < 3; i++) {
      h.clock.advance(1000)
      await post('/v1/forget', { user_id: `u${i}` })
    }
    const body = (await h.app.inject({ url: '/v1/suppressions?limit=2', headers: t.headers })).json()
    expect(body.limit).toBe(2)
    expect(body.suppressions).toHaveLength(2)
    expect(body.suppressions[0].createdMs).toBeGreaterThan(body.suppressions[1].createdMs)
    expect(Object.keys(body.suppressions[0]).sort()).toEqual([
      'action',
      'createdMs',
      'entityType',
      'eventId',
      'valueHash',
    ])
    expect((await h.app.inject({ url: '/v1/suppressions', headers: t.headers })).json().limit).toBe(100)
    expect((await h.app.inject({ url: '/v1/suppressions?limit=500', headers: t.headers })).statusCode).toBe(
      200,
    )
    expect(
      (await h.app.inject({ url: '/v1/suppressions?limit=501', headers: t.headers })).json().error,
    ).toContain('query.limit')
  })
})
