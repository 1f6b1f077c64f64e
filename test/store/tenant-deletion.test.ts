import { afterEach, describe, expect, it } from 'vitest'
import { q } from '../../src/store/engine/db.js'
import { GroupMeter } from '../../src/store/events/group-meter.js'
import { UNKEYED_TENANT_TABLES } from '../../src/store/schema/tenant-keys.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/**
 * Tables with a tenant_id that a tenant's deletion leaves alone, by design: the shared network's flags
 * are contributions to every tenant's scoring, kept for the network's retention period.
 */
const KEPT_AFTER_DELETION = new Set(['network_flags'])

/** Every table (on PostgreSQL also every partition) that has a tenant_id column, from the catalogue. */
async function tenantTables(h: Harness): Promise<string[]> {
  const rows = await h.store.db.all<{ t: string }>(
    h.store.db.dialect === 'sqlite'
      ? `SELECT m.name AS t FROM sqlite_master m, pragma_table_info(m.name) p
          WHERE m.type = 'table' AND p.name = 'tenant_id' ORDER BY m.name`
      : `SELECT table_name AS t FROM information_schema.columns
          WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY table_name`,
  )
  return rows.map((r) => r.t)
}

async function rowsOf(h: Harness, tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const t of await tenantTables(h)) {
    const r = await h.store.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t} WHERE tenant_id = ?`, [
      tenantId,
    ])
    out[t] = Number(r?.n ?? 0)
  }
  return out
}

/** Scores, labels, checks and config that fill the tenant's tables. */
async function fill(h: Harness, t: TestTenant): Promise<void> {
  const post = (url: string, payload: object, method: 'POST' | 'PUT' = 'POST') =>
    h.app.inject({ method, url, headers: t.headers, payload })
  expect((await post('/v1/config', { attributes: { ref: { counted: true } } }, 'PUT')).statusCode).toBe(200)
  let last = ''
  let token: string | undefined
  for (let i = 0; i < 6; i++) {
    const r = await post('/v1/score', {
      event: 'login',
      user_id: `u${i % 3}`,
      email: `person${i}@example.com`,
      ip: '79.200.1.1',
      device_id: 'fp-1'.padEnd(32, 'x'),
      // The token carried back: a rung-1 link of the fingerprint (device_link_counts).
      ...(token ? { device_token: token } : {}),
      attributes: { ref: 'R1' },
    })
    expect(r.statusCode, r.body).toBe(200)
    last = r.json().event_id
    token = r.json().device_token
    h.clock.advance(1000)
  }
  expect((await post('/v1/label', { label: 'fraud', event_id: last })).statusCode).toBe(200)
  expect((await post('/v1/check/email', { email: 'someone@example.com' })).statusCode).toBe(200)
  expect((await post('/v1/lists', { list: 'block', type: 'user', value: 'u9' })).statusCode).toBe(200)
}

describe.each<Engine>(['sqlite', 'postgres'])('deleting a tenant on %s', (engine) => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('leaves none of its rows in any table with a tenant_id, and the other tenant untouched', async () => {
    h = await build({ engine })
    h.clock.set(Date.now())
    const a = await h.tenant()
    const b = await h.tenant()
    await fill(h, a)
    await fill(h, b)
    const before = await rowsOf(h, a.tenantId)
    // The scoring tables without a tenant foreign key on PostgreSQL all hold rows of the tenant.
    for (const t of UNKEYED_TENANT_TABLES) expect(before[t], t).toBeGreaterThan(0)
    const others = await rowsOf(h, b.tenantId)
    expect(await h.store.tenants.delete(a.tenantId)).toBe(true)
    const after = await rowsOf(h, a.tenantId)
    for (const [t, n] of Object.entries(after)) if (!KEPT_AFTER_DELETION.has(t)) expect(n, t).toBe(0)
    expect(await rowsOf(h, b.tenantId)).toEqual(others)
    expect(await h.store.tenants.delete(a.tenantId)).toBe(false)
  })

  run('a score whose tenant is gone is refused and writes nothing', async () => {
    h = await build({ engine })
    h.clock.set(Date.now())
    const a = await h.tenant()
    const score = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: a.headers,
        payload: { event: 'login', user_id: 'u' },
      })
    expect((await score()).statusCode).toBe(200)
    // Deleted behind the key cache's back (as by another node): the group finds the tenant row gone.
    await h.store.db.run('DELETE FROM tenants WHERE id = ?', [a.tenantId])
    for (const t of UNKEYED_TENANT_TABLES)
      await h.store.db.run(`DELETE FROM ${t} WHERE tenant_id = ?`, [a.tenantId])
    const refused = await score()
    expect(refused.statusCode).toBe(401)
    expect(Object.values(await rowsOf(h, a.tenantId)).every((n) => n === 0)).toBe(true)
  })
})

describe('deleting a tenant while its scores are in flight (PostgreSQL)', () => {
  let h: Harness
  afterEach(async () => {
    await h?.close()
  })

  it.skipIf(!hasPg)(
    'waits for the groups holding the tenant, refuses later ones, and leaves no row',
    async () => {
      h = await build({ engine: 'postgres' })
      h.clock.set(Date.now())
      const a = await h.tenant()
      const score = (i: number) =>
        h.app.inject({
          method: 'POST',
          url: '/v1/score',
          headers: a.headers,
          payload: {
            event: 'login',
            user_id: `u${i % 7}`,
            ip: `79.200.1.${i % 50}`,
            device_id: `fp-${i % 5}`.padEnd(32, 'x'),
          },
        })
      expect((await score(0)).statusCode).toBe(200)
      const inFlight = Array.from({ length: 48 }, (_, i) => score(i + 1))
      // Once the first of them has committed, the rest are queued or running in groups.
      await Promise.race(inFlight)
      const deleted = h.store.tenants.delete(a.tenantId)
      const statuses = (await Promise.all(inFlight)).map((r) => r.statusCode)
      expect(await deleted).toBe(true)
      expect(statuses.every((s) => s === 200 || s === 401)).toBe(true)
      expect(Object.entries(await rowsOf(h, a.tenantId)).filter(([, n]) => n > 0)).toEqual([])
    },
  )

  it.skipIf(!hasPg)(
    'a deletion waits for a group that wrote rows of the tenant, then deletes them',
    async () => {
      h = await build({ engine: 'postgres' })
      const a = await h.tenant()
      const usage = h.store.usage
      const tenantId = a.tenantId
      // A group's first job for the tenant: the meter's reading, one row without a foreign key, then a
      // pause before COMMIT during which the deletion starts.
      let wrote = false
      const group = h.store.db.tx(function* () {
        expect(yield* new GroupMeter(usage).take(tenantId, '2030-01', 1, 10)).toBe(true)
        yield* q.run('INSERT INTO ip_accounts (tenant_id, ip_hash, user_id, last_ms) VALUES (?, ?, ?, ?)', [
          tenantId,
          'ip',
          'user',
          1,
        ])
        wrote = true
        yield* q.get('SELECT pg_sleep(0.5)')
      })
      // The deletion starts once the group holds the tenant and has written (however slow the machine).
      while (!wrote) await new Promise((r) => setTimeout(r, 10))
      const deleted = await h.store.tenants.delete(tenantId)
      await group
      expect(deleted).toBe(true)
      expect(Object.entries(await rowsOf(h, tenantId)).filter(([, n]) => n > 0)).toEqual([])
      // A group starting after the deletion finds the tenant gone before it writes.
      const late = h.store.db.tx(function* () {
        return yield* new GroupMeter(usage).take(tenantId, '2030-01', 1, 10)
      })
      await expect(late).rejects.toThrow('the tenant no longer exists')
    },
  )
})
