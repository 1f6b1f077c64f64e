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

const post = (payload: object, headers = t.headers) =>
  h.app.inject({ method: 'POST', url: '/v1/lists', headers, payload })

describe('POST /v1/lists', () => {
  it('stores email entries as a hash of the canonical mailbox with a masked hint', async () => {
    const res = await post({ list: 'block', type: 'email', value: 'John.Doe+promo@googlemail.com' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      list: 'block',
      type: 'email',
      hint: 'jo***@gmail.com',
      value: 'John.Doe+promo@googlemail.com',
    })
    expect(body.id).toMatch(/^\d+$/)
    // Another spelling of the same mailbox is the same entry.
    const again = await post({ list: 'block', type: 'email', value: 'johndoe@gmail.com' })
    expect(again.json().id).toBe(body.id)
    const rows = await h.store.db.all<{ value_key: string; hint: string }>(
      'SELECT value_key, hint FROM list_entries',
    )
    expect(rows).toEqual([
      { value_key: h.hasher.entity('email', 'johndoe@gmail.com'), hint: 'jo***@gmail.com' },
    ])
    expect(JSON.stringify(rows)).not.toContain('john')
  })

  it('normalises IP entries (IPv4-mapped IPv6 is the IPv4 address) and never stores the address', async () => {
    const a = (await post({ list: 'allow', type: 'ip', value: '::ffff:203.0.113.9' })).json()
    const b = (await post({ list: 'allow', type: 'ip', value: '203.0.113.9' })).json()
    expect(a.id).toBe(b.id)
    expect(a.hint).toBe('203.0.113.x')
    const v6 = (await post({ list: 'allow', type: 'ip', value: '2001:DB8:0:0:0:0:0:1' })).json()
    expect(v6.hint).toBe('2001:db8::x')
    const dump = JSON.stringify(await h.store.db.all('SELECT * FROM list_entries'))
    expect(dump).not.toContain('203.0.113.9')
    expect(dump).not.toContain('2001:db8::1')
  })

  it('keeps device and user ids as sent', async () => {
    const res = (await post({ list: 'block', type: 'device', value: 'fp-123' })).json()
    expect(res).toMatchObject({ type: 'device', hint: 'fp-123', value: 'fp-123' })
  })

  it('rejects values that are not an email or IP for those types, naming the field', async () => {
    for (const [type, value] of [
      ['email', 'not-an-email'],
      ['ip', '999.1.1.1'],
      ['user', '   '],
    ]) {
      const res = await post({ list: 'block', type, value })
      expect(res.statusCode, `${type}:${value}`).toBe(400)
      expect(res.json().error).toContain('body.value')
    }
  })

  it('enforces value length 1-320 and the list/type enums', async () => {
    expect((await post({ list: 'block', type: 'user', value: 'x'.repeat(320) })).statusCode).toBe(200)
    const long = await post({ list: 'block', type: 'user', value: 'x'.repeat(321) })
    expect(long.statusCode).toBe(400)
    expect(long.json().error).toContain('body.value')
    expect((await post({ list: 'block', type: 'user', value: '' })).statusCode).toBe(400)
    // Named lists are lower-case (test/api/list-ranges.test.ts).
    const badList = await post({ list: 'Grey', type: 'user', value: 'x' })
    expect(badList.statusCode).toBe(400)
    expect(badList.json().error).toContain('body.list')
    expect((await post({ list: 'block', type: 'card', value: 'x' })).json().error).toContain('body.type')
    expect((await post({ list: 'block', type: 'phone', value: 'x' })).json().error).toContain('body.value')
    for (const field of ['list', 'type', 'value']) {
      const body: Record<string, string> = { list: 'block', type: 'user', value: 'x' }
      delete body[field]
      const res = await post(body)
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toContain(`body.${field}`)
    }
  })

  it('rejects unknown fields and does not coerce types', async () => {
    // (`note` is a field since list entries take one: docs/api-conventions.md.)
    const extra = await post({ list: 'block', type: 'user', value: 'x', comment: 'hi' })
    expect(extra.statusCode).toBe(400)
    expect(extra.json().error).toContain('body.comment')
    const numeric = await post({ list: 'block', type: 'user', value: 12 })
    expect(numeric.statusCode).toBe(400)
    expect(numeric.json().error).toContain('body.value')
    expect(await h.store.db.all('SELECT * FROM list_entries')).toEqual([])
  })
})

describe('GET /v1/lists and DELETE /v1/lists/{id}', () => {
  it('lists newest first with paging, and deletes by id', async () => {
    for (let i = 0; i < 5; i++) await post({ list: 'block', type: 'user', value: `u${i}` })
    const page = (await h.app.inject({ url: '/v1/lists?limit=2&offset=1', headers: t.headers })).json()
    expect(page.total).toBe(5)
    expect(page.entries.map((e: { value: string }) => e.value)).toEqual(['u3', 'u2'])
    const id = page.entries[0].id
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/lists/${id}`, headers: t.headers })
    expect(del.statusCode).toBe(200)
    expect(del.json()).toMatchObject({ id, value: 'u3' })
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/lists/${id}`, headers: t.headers })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toContain(id)
  })

  it('validates limit (1-1000), offset, the id and unknown query parameters', async () => {
    const get = (q: string) => h.app.inject({ url: `/v1/lists${q}`, headers: t.headers })
    expect((await get('?limit=1000')).statusCode).toBe(200)
    expect((await get('?limit=1001')).json().error).toContain('query.limit')
    expect((await get('?limit=0')).statusCode).toBe(400)
    expect((await get('?limit=-1')).statusCode).toBe(400)
    expect((await get('?offset=abc')).json().error).toContain('query.offset')
    expect((await get('?verdict=x')).json().error).toContain('query.verdict')
    const badId = await h.app.inject({ method: 'DELETE', url: '/v1/lists/abc', headers: t.headers })
    expect(badId.statusCode).toBe(400)
    expect(badId.json().error).toContain('params.id')
  })
})

describe('POST /v1/batch/lists', () => {
  const batch = (rows: unknown[]) =>
    h.app.inject({ method: 'POST', url: '/v1/batch/lists', headers: t.headers, payload: { rows } })
  const count = async () => (await h.store.lists.list(t.tenantId, 1000, 0)).total

  it('accepts 1 and 1000 rows and answers results in order', async () => {
    const one = await batch([{ list: 'allow', type: 'user', value: 'a' }])
    expect(one.statusCode).toBe(200)
    expect(one.json().results).toHaveLength(1)
    const rows = Array.from({ length: 1000 }, (_, i) => ({ list: 'block', type: 'user', value: `user-${i}` }))
    const res = await batch(rows)
    expect(res.statusCode).toBe(200)
    expect(res.json().results.map((r: { value: string }) => r.value)).toEqual(rows.map((r) => r.value))
    expect(await count()).toBe(1001)
  })

  it('rejects 0 and 1001 rows', async () => {
    expect((await batch([])).statusCode).toBe(400)
    const rows = Array.from({ length: 1001 }, (_, i) => ({ list: 'block', type: 'user', value: `u${i}` }))
    const res = await batch(rows)
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toContain('body.rows')
    expect(await count()).toBe(0)
  })

  it('rejects the whole batch when one row is invalid, naming the row index', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ list: 'block', type: 'user', value: `u${i}` }))
    const schemaBad = [...rows, { list: 'block', type: 'user', value: 'x', extra: 1 }]
    const res1 = await batch(schemaBad)
    expect(res1.statusCode).toBe(400)
    expect(res1.json().error).toContain('rows[10]')
    const semanticBad = [
      ...rows.slice(0, 7),
      { list: 'block', type: 'email', value: 'nope' },
      ...rows.slice(7),
    ]
    const res2 = await batch(semanticBad)
    expect(res2.statusCode).toBe(400)
    expect(res2.json().error).toContain('rows[7]')
    expect(await count()).toBe(0)
  })
})
