import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { importFeed } from '../../src/intel/feeds/update.js'
import type { Intel } from '../../src/intel/index.js'
import { loadIpIntel } from '../../src/intel/ip/index.js'
import { backgroundJobs, type JobContext, Scheduler } from '../../src/jobs/index.js'
import { build, type Harness } from '../helpers/build.js'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'feeds')

describe('feed-reload', () => {
  let scheduler: Scheduler | undefined
  afterEach(() => scheduler?.stop())

  it('notes the stored feeds on its first run and reloads them once their metadata changes', async () => {
    const feedsDir = await mkdtemp(join(tmpdir(), 'verdict-job-feeds-'))
    const ip = await loadIpIntel({ feedsDir, city: false })
    const lines: string[] = []
    const ctx = {
      intel: { ip } as unknown as Intel,
      log: { info: (m: string) => lines.push(m), warn: (_: unknown, m: string) => lines.push(m) },
    } as unknown as JobContext
    scheduler = new Scheduler(backgroundJobs({ feedsReloadMs: 60_000, retentionDays: 400 }), ctx)
    expect(await scheduler.runNow('feed-reload')).toBe(true)
    await importFeed('tor', join(FIXTURES, 'tor-bulk-exit-list.txt'), { dir: feedsDir })
    expect(ip.lookup('185.220.101.1')?.isTor).toBe(false)
    await scheduler.runNow('feed-reload')
    expect(ip.lookup('185.220.101.1')?.isTor).toBe(true)
    expect(lines).toEqual(['reloaded IP feeds'])
    // Nothing changed since: no second reload.
    await scheduler.runNow('feed-reload')
    expect(lines).toEqual(['reloaded IP feeds'])
  })
})

describe('jobs over a real store', () => {
  let h: Harness
  afterEach(() => h.close())

  it('trap-retention deletes trap hits past the 30-day window', async () => {
    h = await build()
    const now = h.clock.now()
    const day = 86_400_000
    const hit = { ipPrefix: '198.51.100.0/24', path: '/.env', source: 'import' as const }
    await h.store.db.tx(function* () {
      yield* h.store.network.addTrapHit({ ...hit, ipHash: 'a'.repeat(64), atMs: now - 40 * day })
      yield* h.store.network.addTrapHit({ ...hit, ipHash: 'b'.repeat(64), atMs: now - day })
    })
    const count = async () => (await h.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM trap_hits'))?.n
    expect(Number(await count())).toBe(2)
    expect(await h.jobs.runNow('trap-retention')).toBe(true)
    expect(Number(await count())).toBe(1)
  })
})
