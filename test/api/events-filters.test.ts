import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
let a: TestTenant
const ids: string[] = []

beforeAll(async () => {
  h = await build()
  a = await h.tenant()
  for (const payload of [
    { event: 'signup', user_id: 'f-1', ip: '8.8.8.8' },
    { event: 'signup', user_id: 'f-2', email: 'x@mailinator.com' },
    { event: 'login', user_id: 'f-3' },
  ]) {
    const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: a.headers, payload })
    ids.push(res.json().event_id)
    h.clock.advance(60_000)
  }
})
afterAll(async () => {
  await h.close()
})

const list = async (qs: string) => {
  const res = await h.app.inject({ url: `/v1/events?${qs}`, headers: a.headers })
  expect(res.statusCode, res.body).toBe(200)
  return (res.json().events as { id: string }[]).map((e) => e.id)
}

describe('GET /v1/events filters by reason code and time range', () => {
  it('keeps only events the reason fired on', async () => {
    expect(await list('reason=datacenter_ip')).toEqual([ids[0]])
    expect(await list('reason=disposable_email')).toEqual([ids[1]])
    expect(await list('reason=datacenter')).toEqual([])
  })

  it('keeps only events in [since_ms, until_ms)', async () => {
    const t0 = h.clock.now() - 3 * 60_000
    expect(await list(`since_ms=${t0 + 60_000}`)).toEqual([ids[2], ids[1]])
    expect(await list(`until_ms=${t0 + 60_000}`)).toEqual([ids[0]])
    expect(await list(`since_ms=${t0 + 60_000}&until_ms=${t0 + 120_000}`)).toEqual([ids[1]])
  })

  it('refuses a malformed reason or time', async () => {
    for (const qs of ['reason=Bad%20Code', 'since_ms=yesterday', 'until_ms=-1']) {
      const res = await h.app.inject({ url: `/v1/events?${qs}`, headers: a.headers })
      expect(res.statusCode, qs).toBe(400)
    }
  })
})
