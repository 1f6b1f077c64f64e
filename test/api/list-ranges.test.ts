import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])(
  'lists: CIDR ranges, phones and named lists on %s',
  (engine) => {
    let h: Harness | undefined
    let t: TestTenant
    afterEach(async () => {
      await h?.close()
      h = undefined
    })
    const run = it.skipIf(engine === 'postgres' && !hasPg)
    const setup = async () => {
      h = await build({ engine })
      h.clock.set(1_800_000_000_000)
      t = await h.tenant()
    }
    const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
      h!.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
    const add = (payload: object) => api('POST', '/v1/lists', payload)
    const score = async (body: object) => (await api('POST', '/v1/score', { event: 'login', ...body })).json()

    run('an IPv4 range matches exactly its addresses, first and last included', async () => {
      await setup()
      const res = await add({ list: 'block', type: 'ip', value: '203.0.113.16/28' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ type: 'ip', hint: '203.0.113.x/28' })
      for (const [ip, blocked] of [
        ['203.0.113.15', false],
        ['203.0.113.16', true],
        ['203.0.113.31', true],
        ['203.0.113.32', false],
        ['::ffff:203.0.113.20', true],
      ] as const) {
        const r = await score({ ip })
        expect(r.reasons.includes('blocklisted_ip'), ip).toBe(blocked)
        expect(r.verdict === 'block', ip).toBe(blocked)
      }
    })

    run('an IPv6 range matches exactly its addresses, first and last included', async () => {
      await setup()
      const res = await add({ list: 'block', type: 'ip', value: '2001:DB8:1:2::/64' })
      expect(res.json().hint).toBe('2001:db8:1::x/64')
      for (const [ip, blocked] of [
        ['2001:db8:1:1:ffff:ffff:ffff:ffff', false],
        ['2001:db8:1:2::', true],
        ['2001:db8:1:2:ffff:ffff:ffff:ffff', true],
        ['2001:db8:1:3::', false],
      ] as const) {
        expect((await score({ ip })).reasons.includes('blocklisted_ip'), ip).toBe(blocked)
      }
    })

    run('ranges of several lengths and versions match together, and allow ranges allow', async () => {
      await setup()
      await add({ list: 'allow', type: 'ip', value: '10.0.0.0/8' })
      await add({ list: 'block', type: 'ip', value: '10.20.0.0/16' })
      await add({ list: 'block', type: 'ip', value: '2001:db8::/32' })
      expect((await score({ ip: '10.1.2.3' })).reasons).toContain('allowlisted_ip')
      const both = await score({ ip: '10.20.9.9' })
      // A block beats an allow when both match.
      expect(both.verdict).toBe('block')
      expect((await score({ ip: '2001:db8:ffff::1' })).verdict).toBe('block')
      expect((await score({ ip: '11.0.0.1' })).reasons).not.toContain('allowlisted_ip')
    })

    run('never stores a listed address: narrow ranges are hashed and masked, wide ones shown', async () => {
      await setup()
      const narrow = (await add({ list: 'block', type: 'ip', value: '198.51.100.64/26' })).json()
      const wide = (await add({ list: 'block', type: 'ip', value: '198.51.0.0/16' })).json()
      expect(narrow.hint).toBe('198.51.100.x/26')
      expect(wide.hint).toBe('198.51.0.0/16')
      const rows = await h!.store.db.all<Record<string, unknown>>(
        'SELECT value_key, hint, ip_version, prefix_len FROM list_entries ORDER BY id',
      )
      expect(rows).toEqual([
        {
          value_key: h!.hasher.entity('ip', '198.51.100.64/26'),
          hint: '198.51.100.x/26',
          ip_version: 4,
          prefix_len: 26,
        },
        {
          value_key: h!.hasher.entity('ip', '198.51.0.0/16'),
          hint: '198.51.0.0/16',
          ip_version: 4,
          prefix_len: 16,
        },
      ])
      expect(JSON.stringify(rows)).not.toContain('198.51.100.64')
    })

    run('a full-length range is the address itself', async () => {
      await setup()
      const a = (await add({ list: 'block', type: 'ip', value: '192.0.2.7/32' })).json()
      const b = (await add({ list: 'block', type: 'ip', value: '192.0.2.7' })).json()
      expect(a.id).toBe(b.id)
      expect(a.hint).toBe('192.0.2.x')
    })

    run('refuses ranges with host bits, out-of-bound lengths or bad syntax, naming the field', async () => {
      await setup()
      for (const [value, message] of [
        ['203.0.113.5/24', 'body.value: value has host bits set; the range is 203.0.113.0/24'],
        ['10.0.0.0/7', "body.value: value's prefix length must be 8-32 for IPv4"],
        ['2001:db8::/15', "body.value: value's prefix length must be 16-128 for IPv6"],
        ['10.0.0.0/33', "body.value: value's prefix length must be 8-32 for IPv4"],
        ['10.0.0.0/', 'body.value: value is not a valid CIDR range'],
        ['10.0.0/24', 'body.value: value is not a valid CIDR range'],
        ['::ffff:10.0.0.0/120', 'body.value: value is an IPv4-mapped IPv6 range; write it as an IPv4 range'],
      ]) {
        const res = await add({ list: 'block', type: 'ip', value })
        expect(res.statusCode, value).toBe(400)
        expect(res.json().error, value).toBe(message)
      }
      expect(await h!.store.db.all('SELECT id FROM list_entries')).toEqual([])
    })

    run('phone entries are stored hashed under E.164 and match any spelling of the number', async () => {
      await setup()
      const res = await add({ list: 'block', type: 'phone', value: '+44 20 7946 0958' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ type: 'phone', hint: '+44 ••••••58' })
      expect(res.json().value).toBe('+44 20 7946 0958')
      const again = await add({ list: 'block', type: 'phone', value: '0044-20-7946-0958' })
      expect(again.json().id).toBe(res.json().id)
      const hit = await score({ phone: '+442079460958' })
      expect(hit.reasons).toContain('blocklisted_phone')
      expect(hit.verdict).toBe('block')
      // The same number written nationally, with its country.
      expect((await score({ phone: '020 7946 0958', phone_country: 'GB' })).verdict).toBe('block')
      expect((await score({ phone: '+442079460959' })).verdict).not.toBe('block')
      const rows = await h!.store.db.all<{ value_key: string }>('SELECT value_key FROM list_entries')
      expect(rows).toEqual([{ value_key: h!.hasher.entity('phone', '+442079460958') }])
      const listed = (await api('GET', '/v1/lists')).json().entries
      expect(listed).toEqual([expect.not.objectContaining({ value: expect.anything() })])
      expect(JSON.stringify(listed)).not.toContain('7946')
    })

    run('erasing a phone deletes its list entries', async () => {
      await setup()
      await add({ list: 'block', type: 'phone', value: '+14155550123' })
      await add({ list: 'block', type: 'phone', value: '+14155550124' })
      const res = await api('POST', '/v1/forget', { phone: '+1 (415) 555-0123' })
      expect(res.statusCode).toBe(200)
      expect(res.json().deleted.list_entries).toBe(1)
      const left = (await api('GET', '/v1/lists')).json().entries
      expect(left).toEqual([expect.objectContaining({ hint: '+14 ••••••24' })])
    })

    run('an allowlisted phone allows', async () => {
      await setup()
      await add({ list: 'allow', type: 'phone', value: '+14155550123' })
      const r = await score({ phone: '+1 415 555 0123', ip: '10.0.0.1' })
      expect(r.reasons).toContain('allowlisted_phone')
      expect(r.verdict).toBe('allow')
    })

    run('refuses a phone that is not in international form, naming the field', async () => {
      await setup()
      const res = await add({ list: 'block', type: 'phone', value: '020 7946 0958' })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe(
        'body.value: value is not a phone number in international form (+ and country code)',
      )
    })

    run('named lists never decide, and rules test membership of each identifier', async () => {
      await setup()
      const vip = await add({ list: 'vip', type: 'user', value: 'u-1' })
      expect(vip.statusCode).toBe(200)
      expect(vip.json()).toMatchObject({ list: 'vip', type: 'user', value: 'u-1' })
      await add({ list: 'office_net', type: 'ip', value: '192.0.2.0/24' })
      await add({ list: 'mules', type: 'phone', value: '+14155550199' })
      const plain = await score({ user_id: 'u-1' })
      expect(plain.score).toBe(0)
      expect(plain.reasons.filter((r: string) => r.includes('listed'))).toEqual([])
      const saved = await api('PUT', '/v1/config', {
        rules: [
          { id: 'vip', when: "'vip' in lists.user", then: { score: -10 }, mode: 'enforce', rollout: 100 },
          {
            id: 'office',
            when: "'office_net' in lists.ip",
            then: { score: 40 },
            mode: 'enforce',
            rollout: 100,
          },
          {
            id: 'mule',
            when: "'mules' in lists.phone",
            then: { verdict: 'block' },
            mode: 'enforce',
            rollout: 100,
          },
          {
            id: 'blocked_dev',
            when: "'block' in lists.device && lists.device.size() == 1",
            then: { score: 1 },
            mode: 'enforce',
            rollout: 100,
          },
        ],
      })
      expect(saved.statusCode).toBe(200)
      expect((await score({ user_id: 'u-1' })).reasons).toEqual(['rule:vip'])
      expect((await score({ user_id: 'u-2' })).reasons).toEqual([])
      expect((await score({ user_id: 'u-2', ip: '192.0.2.200' })).reasons).toContain('rule:office')
      expect((await score({ user_id: 'u-2', ip: '192.0.3.1' })).reasons).not.toContain('rule:office')
      expect((await score({ phone: '+1 415 555 0199' })).verdict).toBe('block')
    })

    run('refuses a list name outside the pattern, naming the field', async () => {
      await setup()
      for (const list of ['Vip', '1vip', 'v-ip', 'x'.repeat(41), '']) {
        const res = await add({ list, type: 'user', value: 'u' })
        expect(res.statusCode, list).toBe(400)
        expect(res.json().error, list).toContain('body.list')
      }
      expect((await add({ list: 'x'.repeat(40), type: 'user', value: 'u' })).statusCode).toBe(200)
    })

    run('GET /v1/lists filters by list, type and status, with paging and totals', async () => {
      await setup()
      const now = h!.clock.now()
      await add({ list: 'block', type: 'user', value: 'b1' })
      await add({ list: 'block', type: 'ip', value: '192.0.2.0/24' })
      await add({ list: 'vip', type: 'user', value: 'v1', expires_ms: now + 1000 })
      await add({ list: 'vip', type: 'user', value: 'v2' })
      await add({ list: 'allow', type: 'user', value: 'a1', expires_ms: now + 1000 })
      h!.clock.set(now + 1000)
      const get = async (q: string) => {
        const res = await api('GET', `/v1/lists${q}`)
        expect(res.statusCode, q).toBe(200)
        const body = res.json()
        return {
          total: body.total,
          values: body.entries.map((e: { value?: string; hint: string }) => e.value ?? e.hint),
        }
      }
      expect(await get('?list=vip')).toEqual({ total: 2, values: ['v2', 'v1'] })
      expect(await get('?type=ip')).toEqual({ total: 1, values: ['192.0.2.0/24'] })
      expect(await get('?list=block&type=user')).toEqual({ total: 1, values: ['b1'] })
      expect(await get('?status=expired')).toEqual({ total: 2, values: ['a1', 'v1'] })
      expect(await get('?status=active')).toEqual({ total: 3, values: ['v2', '192.0.2.0/24', 'b1'] })
      expect(await get('?list=vip&status=active')).toEqual({ total: 1, values: ['v2'] })
      expect(await get('?status=active&limit=1&offset=1')).toEqual({ total: 3, values: ['192.0.2.0/24'] })
      expect(await get('?list=nothing')).toEqual({ total: 0, values: [] })
      for (const [q, field] of [
        ['?status=gone', 'query.status'],
        ['?type=card', 'query.type'],
        ['?list=Block', 'query.list'],
      ]) {
        const res = await api('GET', `/v1/lists${q}`)
        expect(res.statusCode, q).toBe(400)
        expect(res.json().error, q).toContain(field)
      }
    })
  },
)
