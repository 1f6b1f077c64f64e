import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { usagePeriod } from '../../src/store/access/usage.js'
import type { Store } from '../../src/store/index.js'
import { type Engine, openTestStore } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

const tenant = (id: string) => ({
  id,
  name: id,
  shareNetwork: false,
  rateLimit: 240,
  monthlyQuota: 100,
  createdMs: 1,
})

describe.each<Engine>(['sqlite', 'postgres'])('store on %s', (engine) => {
  let store: Store
  let cleanup: () => Promise<void>

  beforeAll(() => {
    if (engine === 'postgres' && !hasPg) console.warn('store tests on PostgreSQL skipped: no server')
  })
  afterEach(async () => {
    await cleanup?.()
  })

  const addEntry = (...a: Parameters<Store['lists']['add']>) => store.db.tx(() => store.lists.add(...a))
  const meter = (...a: Parameters<Store['usage']['meter']>) => store.db.tx(() => store.usage.meter(...a))

  const setup = async () => {
    const s = await openTestStore(engine)
    store = s.store
    cleanup = s.cleanup
    await store.tenants.create(tenant('a'))
    await store.tenants.create(tenant('b'))
  }

  it.skipIf(engine === 'postgres' && !hasPg)('creates, lists and cascades tenant deletion', async () => {
    await setup()
    expect((await store.tenants.list()).map((t) => t.id)).toEqual(['a', 'b'])
    await store.tenants.addKey(
      { id: 'k1', tenantId: 'a', prefix: 'vk_x', createdMs: 1, revokedMs: null },
      'hash1',
    )
    await addEntry('a', { list: 'block', type: 'user', valueKey: 'u1', hint: 'u1' }, 5)
    await store.config.set(
      'a',
      { weights: { datacenterIp: 10 }, thresholds: {} },
      () => {},
      JSON.stringify,
      Date.now(),
    )
    expect(await store.tenants.delete('a')).toBe(true)
    expect(await store.tenants.delete('a')).toBe(false)
    expect(await store.tenants.findByKeyHash('hash1')).toBeUndefined()
    expect((await store.db.all('SELECT * FROM list_entries')).length).toBe(0)
    expect((await store.db.all('SELECT * FROM tenant_config')).length).toBe(0)
  })

  it.skipIf(engine === 'postgres' && !hasPg)('finds keys by hash and records revocation', async () => {
    await setup()
    await store.tenants.addKey(
      { id: 'k1', tenantId: 'a', prefix: 'vk_x', createdMs: 1, revokedMs: null },
      'hash1',
    )
    const found = await store.tenants.findByKeyHash('hash1')
    expect(found?.tenant.id).toBe('a')
    expect(found?.revokedMs).toBeNull()
    expect(await store.tenants.revokeKey('k1', 99)).toBe(true)
    expect((await store.tenants.findByKeyHash('hash1'))?.revokedMs).toBe(99)
    expect(await store.tenants.revokeKey('k1', 100)).toBe(false)
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'scopes list entries by tenant and adds idempotently',
    async () => {
      await setup()
      const e1 = await addEntry('a', { list: 'block', type: 'email', valueKey: 'h1', hint: 'jo***@x.com' }, 5)
      const again = await addEntry(
        'a',
        { list: 'block', type: 'email', valueKey: 'h1', hint: 'jo***@x.com' },
        6,
      )
      expect(again.id).toBe(e1.id)
      expect(again.createdMs).toBe(5)
      await addEntry('b', { list: 'allow', type: 'email', valueKey: 'h1', hint: 'jo***@x.com' }, 7)
      const matchA = await store.lists.match(
        'a',
        [
          { type: 'email', valueKey: 'h1' },
          { type: 'ip', valueKey: 'nope' },
        ],
        10,
      )
      expect(matchA.map((e) => e.list)).toEqual(['block'])
      expect(await store.lists.remove('b', e1.id)).toBeUndefined()
      expect((await store.lists.remove('a', e1.id))?.id).toBe(e1.id)
      expect((await store.lists.list('a', 10, 0)).total).toBe(0)
      expect((await store.lists.list('b', 10, 0)).total).toBe(1)
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)('rolls back a failed transaction completely', async () => {
    await setup()
    await expect(
      store.lists.addMany(
        'a',
        [
          { list: 'block', type: 'user', valueKey: 'ok', hint: 'ok' },
          // A list name that breaks the NOT NULL constraint aborts the whole batch.
          { list: null as unknown as 'block', type: 'user', valueKey: 'bad', hint: 'bad' },
        ],
        1,
      ),
    ).rejects.toThrow()
    expect((await store.lists.list('a', 10, 0)).total).toBe(0)
  })

  it.skipIf(engine === 'postgres' && !hasPg)('meters usage atomically up to the quota', async () => {
    await setup()
    const period = usagePeriod(Date.UTC(2026, 10, 5))
    const results = await Promise.all(Array.from({ length: 30 }, () => meter('a', period, 4, 100)))
    expect(results.filter(Boolean).length).toBe(25)
    expect(await store.usage.used('a', period)).toBe(100)
    expect(await meter('a', period, 1, 100)).toBe(false)
    expect(await meter('a', usagePeriod(Date.UTC(2026, 11, 1)), 1, 100)).toBe(true)
    expect(await store.usage.used('b', period)).toBe(0)
  })

  it.skipIf(engine === 'postgres' && !hasPg)('keeps config overrides per tenant', async () => {
    await setup()
    await store.config.set(
      'a',
      { weights: { datacenterIp: 10 }, thresholds: { review: 30 } },
      () => {},
      JSON.stringify,
      Date.now(),
    )
    await store.config.set(
      'a',
      { weights: { datacenterIp: 12 }, thresholds: {} },
      () => {},
      JSON.stringify,
      Date.now(),
    )
    expect(await store.config.current('a')).toEqual({
      overrides: { weights: { datacenterIp: 12 }, thresholds: { review: 30 } },
      version: 2,
    })
    expect(await store.config.current('b')).toEqual({
      overrides: { weights: {}, thresholds: {} },
      version: 0,
    })
  })
})

describe('SQLite settings', () => {
  it('runs WAL with incremental auto-vacuum, secure delete and foreign keys', async () => {
    const { store, cleanup } = await openTestStore('sqlite')
    try {
      const pragma = async (name: string) =>
        Object.values((await store.db.get<Record<string, unknown>>(`PRAGMA ${name}`))!)[0]
      expect(await pragma('journal_mode')).toBe('wal')
      expect(await pragma('auto_vacuum')).toBe(2)
      expect(await pragma('secure_delete')).toBe(1)
      expect(await pragma('foreign_keys')).toBe(1)
      expect(await pragma('synchronous')).toBe(1)
    } finally {
      await cleanup()
    }
  })
})
