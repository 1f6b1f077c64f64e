import { afterAll, beforeAll, expect, it } from 'vitest'
import { BEACON_FLAGS } from '../../src/beacon/contract.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Harness } from '../helpers/build.js'

// A tenant that never sent a beacon (a server-side integration) has none for a score to bind: its scores
// make no beacon read (one statement fewer per score). Shown with the table out of reach: such a score
// still answers, while one of a tenant that has sent beacons reads the table and fails.
const SHOP = 'https://shop.example'
let h: Harness

beforeAll(async () => {
  h = await build()
})
afterAll(async () => {
  await h.close()
})

it('a tenant without beacons reads no beacon; one with beacons does', async () => {
  const without = await h.tenant()
  const withBeacons = await h.tenant()
  const pk = (await issueKey(h.store, h.clock, withBeacons.tenantId, { publishable: { origins: [SHOP] } }))
    .apiKey
  const sent = await h.app.inject({
    method: 'POST',
    url: '/v1/beacon',
    headers: { 'x-api-key': pk, origin: SHOP },
    payload: {
      device_id: 'bb'.repeat(32),
      device: {
        ...Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])),
        antidetect_score: 0,
        antidetect_confidence: 'low',
      },
    },
    remoteAddress: '81.2.69.160',
  })
  expect(sent.statusCode, sent.body).toBe(200)
  const body = { event: 'login', user_id: 'u1', device_id: 'cc'.repeat(32), ip: '81.2.69.160' }
  await h.store.db.exec('ALTER TABLE beacon_observations RENAME TO beacon_observations_away')
  try {
    const ok = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: without.headers,
      payload: body,
    })
    expect(ok.statusCode, ok.body).toBe(200)
    const failed = await h.app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: withBeacons.headers,
      payload: body,
    })
    expect(failed.statusCode).not.toBe(200)
  } finally {
    await h.store.db.exec('ALTER TABLE beacon_observations_away RENAME TO beacon_observations')
  }
  const after = await h.app.inject({
    method: 'POST',
    url: '/v1/score',
    headers: withBeacons.headers,
    payload: body,
  })
  expect(after.statusCode, after.body).toBe(200)
})
