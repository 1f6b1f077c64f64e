import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

let h: Harness
afterEach(async () => {
  await h?.close()
})

const score = async (t: TestTenant, payload: Record<string, unknown>) => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return (res.json() as { event_id: string }).event_id
}
const label = (t: TestTenant, payload: Record<string, unknown>) =>
  h.app.inject({ method: 'POST', url: '/v1/label', headers: t.headers, payload })
const get = (t: TestTenant, url: string) => h.app.inject({ url, headers: t.headers })

describe('events and labels (item 9)', () => {
  it('GET /v1/events/{id}: the event as listed, with labels; 404 for another tenant', async () => {
    h = await build()
    const t = await h.tenant()
    const other = await h.tenant()
    const id = await score(t, {
      event: 'signup',
      user_id: 'u-1',
      ip: '203.0.113.7',
      device_id: 'fp-1',
    })
    await label(t, { event_id: id, label: 'fraud' })
    const res = await get(t, `/v1/events/${id}`)
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ id, userId: 'u-1', event: 'signup' })
    expect(body.checks).toBeInstanceOf(Array)
    expect(body.labels).toEqual([expect.objectContaining({ label: 'fraud', event_id: id })])
    expect(body).toHaveProperty('device')
    expect((await get(other, `/v1/events/${id}`)).statusCode).toBe(404)
  })

  it('user_id filters exactly; listed events carry their labels', async () => {
    h = await build()
    const t = await h.tenant()
    const e1 = await score(t, { event: 'login', user_id: 'u-1' })
    await score(t, { event: 'login', user_id: 'u-10' })
    await label(t, { event_id: e1, label: 'chargeback' })
    const page = (await get(t, '/v1/events?user_id=u-1')).json()
    expect(page.total).toBe(1)
    expect(page.events[0].id).toBe(e1)
    expect(page.events[0].labels).toEqual([expect.objectContaining({ label: 'chargeback' })])
  })

  it('the same label twice on one event is one label; GET /v1/labels pages and filters', async () => {
    h = await build()
    const t = await h.tenant()
    const e1 = await score(t, { event: 'login', user_id: 'u-1' })
    const e2 = await score(t, { event: 'login', user_id: 'u-2' })
    const a = (await label(t, { event_id: e1, label: 'fraud' })).json()
    const b = (await label(t, { event_id: e1, label: 'fraud' })).json()
    expect(b.label_id).toBe(a.label_id)
    await label(t, { event_id: e2, label: 'legit' })
    const all = (await get(t, '/v1/labels')).json()
    expect(all.total).toBe(2)
    expect(all.labels.map((l: { event_id: string }) => l.event_id).sort()).toEqual([e1, e2].sort())
    expect((await get(t, `/v1/labels?event_id=${e1}`)).json().total).toBe(1)
    expect((await get(t, '/v1/labels?label=legit')).json().labels[0].event_id).toBe(e2)
    expect((await get(t, '/v1/labels?limit=1')).json().labels).toHaveLength(1)
    expect((await get(await h.tenant(), '/v1/labels')).json().total).toBe(0)
  })

  it('DELETE /v1/labels/{id} withdraws a label and its network flags, in the suppression audit', async () => {
    h = await build()
    const t = await h.tenant({ shareNetwork: true })
    const e1 = await score(t, {
      event: 'signup',
      user_id: 'u-9',
      ip: '198.51.100.23',
      email: 'mule@example.com',
    })
    const l = (await label(t, { event_id: e1, label: 'fraud' })).json()
    expect(l.network.contributed.length).toBeGreaterThan(0)
    expect(
      await h.store.db.get('SELECT COUNT(*) AS n FROM network_flags WHERE tenant_id = ?', [t.tenantId]),
    ).toEqual({
      n: l.network.contributed.length,
    })
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/labels/${l.label_id}`, headers: t.headers })
    expect(del.statusCode, del.body).toBe(200)
    expect(del.json()).toMatchObject({ label_id: l.label_id, withdrawn: true })
    expect(
      await h.store.db.get('SELECT COUNT(*) AS n FROM network_flags WHERE tenant_id = ?', [t.tenantId]),
    ).toEqual({
      n: 0,
    })
    const audit = await h.store.db.all<{ n: number }>(
      "SELECT COUNT(*) AS n FROM suppressions WHERE tenant_id = ? AND action = 'withdraw' AND event_id = ?",
      [t.tenantId, e1],
    )
    expect(audit[0]?.n).toBe(l.network.contributed.length)
    expect((await get(t, `/v1/events/${e1}`)).json().labels).toEqual([])
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/v1/labels/${l.label_id}`, headers: t.headers }))
        .statusCode,
    ).toBe(404)
  })

  it('a label may target a user_id: it shows on all of that user’s events', async () => {
    h = await build()
    const t = await h.tenant()
    const e1 = await score(t, { event: 'login', user_id: 'u-7' })
    const e2 = await score(t, { event: 'checkout', user_id: 'u-7' })
    const res = await label(t, { user_id: 'u-7', label: 'fraud' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ user_id: 'u-7', event_id: null })
    for (const id of [e1, e2]) {
      expect((await get(t, `/v1/events/${id}`)).json().labels).toEqual([
        expect.objectContaining({ label: 'fraud', user_id: 'u-7' }),
      ])
    }
  })

  it('GET /v1/usage returns the month’s usage against the quota', async () => {
    h = await build()
    const t = await h.tenant({ monthlyQuota: 500 })
    await score(t, { event: 'login', user_id: 'u-1' })
    const res = await get(t, '/v1/usage')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ used: 1, quota: 500, remaining: 499 })
    expect(res.json().period).toMatch(/^\d{4}-\d{2}$/)
  })
})
