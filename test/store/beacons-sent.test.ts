import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { BeaconObservation } from '../../src/store/devices/beacons.js'
import { SqliteDb } from '../../src/store/engine/sqlite.js'
import { openStore, type Store } from '../../src/store/index.js'
import { migrate } from '../../src/store/schema/migrations.js'
import { type Engine, openTestStore } from '../helpers/build.js'
import { pgAvailable, TEMPLATE_SCHEMA } from '../helpers/pg.js'

// Scores of a tenant that never sent a beacon skip the beacon reads (migration 35). What must hold: a
// process that cached "none" learns of the tenant's first beacon when another process records it, and
// the mark keeps the first beacon's time.
const hasPg = await pgAvailable()

const tenant = (id: string) => ({
  id,
  name: id,
  shareNetwork: false,
  rateLimit: 240,
  monthlyQuota: 1_000_000,
  createdMs: 0,
})

const beacon = (tenantId: string, createdMs: number): BeaconObservation & { spoofing: boolean } => ({
  tenantId,
  deviceId: 'fp-1',
  visitId: `v-${createdMs}`,
  sessionId: `v-${createdMs}`,
  createdMs,
  ipHash: 'ip-hash',
  netHash: 'net-hash',
  connection: 'residential',
  os: 'macOS',
  browser: 'Chrome',
  mobile: false,
  flags: {},
  ja4: null,
  spoofing: false,
})

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Two processes' stores on one database: the second opened on the first's file or schema. */
async function twoStores(engine: Engine): Promise<[Store, Store]> {
  const s = await openTestStore(engine)
  cleanups.push(s.cleanup)
  const other =
    engine === 'sqlite'
      ? await openStore({ kind: 'sqlite', file: join(s.dir, 'verdict.db') })
      : await openStore({ kind: 'postgres', url: s.pgUrl! }, { pgSchema: TEMPLATE_SCHEMA })
  cleanups.push(() => other.close())
  return [s.store, other]
}

describe.each<Engine>(['sqlite', 'postgres'])('a tenant’s first beacon on %s', (engine) => {
  it.skipIf(engine === 'postgres' && !hasPg)(
    'reaches a process that cached "none", and the mark keeps the first beacon’s time',
    async () => {
      const [here, there] = await twoStores(engine)
      await here.tenants.create(tenant('t1'))
      await here.tenants.create(tenant('t2'))
      expect(await here.beacons.anySent('t1')).toBe(false)
      expect(await here.beacons.anySent('t2')).toBe(false)
      await there.beacons.add(beacon('t1', 1_000))
      await there.beacons.add(beacon('t1', 2_000))
      // SQLite: the next request's check of the file's data version; PostgreSQL: the NOTIFY at COMMIT.
      for (let i = 0; !(await here.beacons.anySent('t1')); i++) {
        expect(i).toBeLessThan(500)
        here.invalidation.poll()
        await new Promise((r) => setTimeout(r, 10))
      }
      expect(await there.beacons.anySent('t1')).toBe(true)
      expect(await here.beacons.anySent('t2')).toBe(false)
      const row = await here.db.get<{ first: number }>(
        'SELECT first_beacon_ms AS first FROM tenants WHERE id = ?',
        ['t1'],
      )
      expect(Number(row?.first)).toBe(1_000)
    },
  )
})

describe('migration 35 on SQLite', () => {
  it('marks the tenants that already sent beacons with their first one’s time, and no other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-m35-'))
    const db = new SqliteDb(join(dir, 'old.db'))
    cleanups.push(async () => {
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    })
    await migrate(db, { until: 34 })
    for (const id of ['t1', 't2'])
      await db.run(
        'INSERT INTO tenants (id, name, share_network, rate_limit, monthly_quota, created_ms) VALUES (?, ?, 0, 10, 10, 0)',
        [id, id],
      )
    for (const at of [5_000, 3_000])
      await db.run(
        `INSERT INTO beacon_observations (tenant_id, device_id, visit_id, session_id, created_ms, mobile, flags)
         VALUES ('t1', 'fp', ?, ?, ?, 0, '{}')`,
        [`v${at}`, `v${at}`, at],
      )
    await migrate(db)
    const rows = await db.all<{ id: string; first: number | null }>(
      'SELECT id, first_beacon_ms AS first FROM tenants ORDER BY id',
    )
    expect(rows.map((r) => [r.id, r.first === null ? null : Number(r.first)])).toEqual([
      ['t1', 3_000],
      ['t2', null],
    ])
  })
})
