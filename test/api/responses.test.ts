import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contextFor } from '../../src/context.js'
import { eventStats, listEvents } from '../../src/services/decisions/events.js'
import { deviceObservations } from '../../src/services/devices/device-observations.js'
import {
  checkBatch,
  checkOne,
  emailCheck,
  ipCheck,
  listLookups,
  phoneCheck,
} from '../../src/services/identifiers/identifier-checks.js'
import { exportSubject, listSuppressions } from '../../src/services/privacy/privacy.js'
import { listEntries } from '../../src/services/rules/lists.js'
import { getConfig } from '../../src/services/rules/tenant-config.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'

/**
 * Answers are serialised by their response schemas, which drop any property they do not name and
 * coerce types. Each answer here must equal, as JSON, what its service verb returns for the same
 * data: a schema that lost a field or turned a null into "" fails.
 */
let h: Harness
let t: TestTenant
let ctx: Parameters<typeof exportSubject>[0]

const DEVICE = 'fp-responses-device-1'
const USER = 'responses-user-1'
const asJson = (v: unknown) => JSON.parse(JSON.stringify(v))
const get = async (url: string) => {
  const res = await h.app.inject({ url, headers: t.headers })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}
const post = async (url: string, payload: object) => {
  const res = await h.app.inject({ method: 'POST', url, headers: t.headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

beforeAll(async () => {
  const { intel } = await testIntel()
  h = await build({ intel })
  t = await h.tenant({ shareNetwork: true, rateLimit: 10_000 })
  const tenant = await h.store.tenants.get(t.tenantId)
  ctx = contextFor(h.services, tenant!, 'responses-test')
  const scored = await post('/v1/score', {
    event: 'signup',
    user_id: USER,
    email: 'Responses.Person+shop@gmail.com',
    ip: '73.162.10.20',
    phone: '+44 20 7946 0778',
    device_id: DEVICE,
    timezone: 'Europe/London',
    device: { is_headless: true, antidetect_score: 80 },
  })
  h.clock.advance(1000)
  // An event with nothing but its name: every nullable field of the listing is null.
  await post('/v1/score', { event: 'login' })
  h.clock.advance(1000)
  // The device comes back from another network with its token: one device identity.
  await post('/v1/score', {
    event: 'signup',
    user_id: USER,
    ip: '45.33.32.156',
    device_id: DEVICE,
    device_token: scored.device_token,
  })
  await post('/v1/check/email', { email: 'responses.person@gmail.com' })
  await post('/v1/lists', { list: 'block', type: 'user', value: USER })
  await post('/v1/label', { label: 'fraud', event_id: scored.event_id, note: 'chargeback filed' })
  await post('/v1/label', { label: 'legit', entities: { email: 'responses.person@gmail.com' } })
})
afterAll(async () => {
  await h.close()
})

describe('answers serialised by schema lose nothing', () => {
  it('events, stats, lookups, lists and config', async () => {
    const events = await get('/v1/events')
    expect(events.events).toHaveLength(3)
    expect(events).toEqual(asJson(await listEvents(ctx, { limit: 50, offset: 0 })))
    expect(events.events[1]).toMatchObject({ userId: null, emailHash: null, asn: null, checks: [] })
    expect(await get('/v1/stats')).toEqual(asJson(await eventStats(ctx, 24)))
    expect(await get('/v1/lookups')).toEqual(asJson(await listLookups(ctx, { limit: 50, offset: 0 })))
    expect(await get('/v1/lists')).toEqual(asJson(await listEntries(ctx, 500, 0)))
    expect(await get('/v1/config')).toEqual(asJson(await getConfig(ctx)))
  })

  it('the subject export (an access request must return everything held)', async () => {
    const body = { user_id: USER, email: 'responses.person@gmail.com', device_id: DEVICE }
    const answer = await post('/v1/subject', body)
    expect(answer.counts).toMatchObject({ events: 2, list_entries: 1, labels: 2, devices: 1 })
    expect(answer).toEqual(asJson(await exportSubject(ctx, body)))
  })

  it('suppressions and device observations', async () => {
    const suppressions = await get('/v1/suppressions')
    expect(suppressions.suppressions.length).toBeGreaterThan(0)
    expect(suppressions).toEqual(asJson(await listSuppressions(ctx, 100)))
    const observations = await get(`/v1/device/${DEVICE}/observations`)
    expect(observations.observations).toHaveLength(2)
    expect(observations).toEqual(asJson(await deviceObservations(ctx, DEVICE, null)))
    expect(await get(`/v1/device/${DEVICE}/observations?hours=1`)).toEqual(
      asJson(await deviceObservations(ctx, DEVICE, 1)),
    )
  })

  it('single and batch identifier checks', async () => {
    const email = { email: 'someone@example.com' }
    const ip = { ip: '45.33.32.156' }
    const phone = { phone: '+442079460000' }
    expect(await post('/v1/check/email', email)).toEqual(asJson(await checkOne(ctx, emailCheck, email)))
    expect(await post('/v1/check/ip', ip)).toEqual(asJson(await checkOne(ctx, ipCheck, ip)))
    expect(await post('/v1/check/phone', phone)).toEqual(asJson(await checkOne(ctx, phoneCheck, phone)))
    const emails = [email, { email: 'not-an-address' }, { email: 'x@mailinator.com' }]
    expect(await post('/v1/batch/check/email', { rows: emails })).toEqual(
      asJson(await checkBatch(ctx, emailCheck, emails)),
    )
    const ips = [ip, { ip: '73.162.10.20' }, { ip: '2001:db8::1' }]
    expect(await post('/v1/batch/check/ip', { rows: ips })).toEqual(
      asJson(await checkBatch(ctx, ipCheck, ips)),
    )
    const phones = [phone, { phone: '020 7946 0000', country: 'GB' }, { phone: '12' + '3'.repeat(3) }]
    expect(await post('/v1/batch/check/phone', { rows: phones })).toEqual(
      asJson(await checkBatch(ctx, phoneCheck, phones)),
    )
  })

  it('label and forget answer every field the verbs return', async () => {
    const ev = await post('/v1/score', { event: 'checkout', user_id: 'responses-user-2', ip: '73.162.10.21' })
    expect(await post('/v1/label', { label: 'chargeback', event_id: ev.event_id })).toEqual({
      label_id: expect.any(String),
      label: 'chargeback',
      event_id: ev.event_id,
      user_id: 'responses-user-2',
      network: { shared: true, contributed: ['ip', 'user'] },
      suppressed: [],
    })
    expect(await post('/v1/forget', { user_id: 'responses-user-2' })).toEqual({
      deleted: {
        events: 1,
        lookups: 0,
        list_entries: 0,
        listEntries: 0,
        labels: 1,
        observations: 0,
        idempotent_responses: 0,
      },
      suppressions: 1,
      storage: 'reclaimed',
    })
  })
})
