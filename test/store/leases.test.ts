import { afterEach, describe, expect, it } from 'vitest'
import { type Job, type JobContext, Scheduler } from '../../src/jobs/index.js'
import { storeLease } from '../../src/jobs/lease.js'
import type { Store } from '../../src/store/index.js'
import { eventually } from '../helpers/app.js'
import { type Engine, openTestStore } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)

describe.each<Engine>(['sqlite', 'postgres'])('job leases on %s', (engine) => {
  let store: Store
  let cleanup: (() => Promise<void>) | undefined
  afterEach(async () => {
    await cleanup?.()
    cleanup = undefined
  })
  const open = async () => {
    const t = await openTestStore(engine)
    store = t.store
    cleanup = t.cleanup
  }

  it.skipIf(engine === 'postgres' && !hasPg)(
    'one holder at a time; renewal, expiry and release',
    async () => {
      await open()
      const l = store.leases
      expect(await l.acquire('job', 'a', T0, 1000)).toBe(true)
      expect(await l.acquire('job', 'b', T0 + 10, 1000)).toBe(false)
      expect(await l.holder('job', T0 + 10)).toBe('a')
      // The holder renews; the other still cannot take it before the renewed expiry.
      expect(await l.acquire('job', 'a', T0 + 900, 1000)).toBe(true)
      expect(await l.acquire('job', 'b', T0 + 1500, 1000)).toBe(false)
      // Not renewed: once expired, another takes it.
      expect(await l.acquire('job', 'b', T0 + 1900, 1000)).toBe(true)
      expect(await l.acquire('job', 'a', T0 + 1950, 1000)).toBe(false)
      // Released: free at once; a release by a non-holder changes nothing.
      await l.release('job', 'a')
      expect(await l.holder('job', T0 + 1960)).toBe('b')
      await l.release('job', 'b')
      expect(await l.holder('job', T0 + 1960)).toBeNull()
      expect(await l.acquire('job', 'a', T0 + 1970, 1000)).toBe(true)
      // Leases of other jobs are independent.
      expect(await l.acquire('other', 'b', T0 + 1970, 1000)).toBe(true)
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'two schedulers sharing the database: one runs the cluster job; it moves over when the holder stops renewing',
    async () => {
      await open()
      const ran: string[] = []
      const log = { info: () => {}, warn: () => {} }
      const job = (node: string): Job => ({
        name: 'shared',
        scope: 'cluster',
        reads: 'nothing',
        writes: 'nothing',
        intervalMs: 20,
        firstRunMs: 0,
        run: async () => void ran.push(node),
      })
      const mk = (node: string, crashes = false) => {
        const lease = storeLease(store.leases, node, () => Date.now())
        // A node that crashes never gets to release its lease.
        if (crashes) lease.release = async () => {}
        return new Scheduler([job(node)], { log } as unknown as JobContext, { lease, leaseTtlMs: 600 })
      }
      const a = mk('a', true)
      const b = mk('b')
      a.start()
      expect(await eventually(() => a.held.includes('shared'))).toBe(true)
      b.start()
      await new Promise((r) => setTimeout(r, 200))
      expect(b.held).toEqual([])
      expect(new Set(ran)).toEqual(new Set(['a']))
      // A dies: its lease stays until it expires, then B takes the job over.
      await a.stop()
      expect(await store.leases.holder('shared', Date.now())).toBe('a')
      expect(await eventually(() => b.held.includes('shared'))).toBe(true)
      expect(await eventually(() => ran.at(-1) === 'b')).toBe(true)
      await b.stop()
      expect(await store.leases.holder('shared', Date.now())).toBeNull()
    },
    15_000,
  )
})
