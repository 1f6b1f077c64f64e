import { afterEach, describe, expect, it } from 'vitest'
import { backgroundJobs, type Job, type JobContext, type JobLease, Scheduler } from '../../src/jobs/index.js'
import { eventually } from '../helpers/app.js'

/** A log that keeps what it is told. */
function memoryLog() {
  const lines: { level: string; msg: string; job?: unknown }[] = []
  return {
    lines,
    info: (msg: string) => lines.push({ level: 'info', msg }),
    warn: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', msg, job: obj['job'] }),
  }
}

/** A promise the test settles by hand. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

/** The scheduler only hands the context to the jobs; these jobs need nothing but the log. */
function context(log: ReturnType<typeof memoryLog>): JobContext {
  return { log } as unknown as JobContext
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function job(name: string, run: Job['run'], extra: Partial<Job> = {}): Job {
  return {
    name,
    scope: 'node',
    reads: 'nothing',
    writes: 'nothing',
    intervalMs: 5,
    firstRunMs: 0,
    run,
    ...extra,
  }
}

let scheduler: Scheduler | undefined
afterEach(async () => {
  await scheduler?.stop()
  scheduler = undefined
})

describe('Scheduler', () => {
  it('never runs two runs of one job at once: ticks that find it running are skipped', async () => {
    const log = memoryLog()
    const release = gate()
    let running = 0
    let most = 0
    let starts = 0
    scheduler = new Scheduler(
      [
        job('slow', async () => {
          starts++
          running++
          most = Math.max(most, running)
          if (starts === 1) await release.opened
          running--
        }),
      ],
      context(log),
    )
    scheduler.start()
    expect(await eventually(() => starts === 1)).toBe(true)
    // Many 5 ms ticks pass while the first run is held open.
    await sleep(60)
    expect(starts).toBe(1)
    release.open()
    expect(await eventually(() => starts >= 3)).toBe(true)
    expect(most).toBe(1)
  })

  it('logs a failed run without crashing and runs the job again at its next interval', async () => {
    const log = memoryLog()
    let runs = 0
    scheduler = new Scheduler(
      [
        job('flaky', async () => {
          runs++
          if (runs === 1) throw new Error('disk on fire')
        }),
      ],
      context(log),
    )
    scheduler.start()
    expect(await eventually(() => runs >= 2)).toBe(true)
    const failures = log.lines.filter((l) => l.level === 'warn')
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ job: 'flaky' })
    expect(failures[0]?.msg).toMatch(/flaky.*disk on fire/)
  })

  it('stop waits for the run in progress, and nothing runs after it', async () => {
    const release = gate()
    let started = 0
    let finished = 0
    scheduler = new Scheduler(
      [
        job('long', async () => {
          started++
          await release.opened
          finished++
        }),
      ],
      context(memoryLog()),
    )
    scheduler.start()
    expect(await eventually(() => started === 1)).toBe(true)
    let stopped = false
    const stopping = scheduler.stop().then(() => {
      stopped = true
    })
    await sleep(20)
    expect(stopped).toBe(false)
    release.open()
    await stopping
    expect(finished).toBe(1)
    await sleep(30)
    expect(started).toBe(1)
  })

  it('runNow runs a job of a scheduler that was never started, and passes its error on', async () => {
    const log = memoryLog()
    const ran: string[] = []
    scheduler = new Scheduler(
      [
        job('a', async () => {
          ran.push('a')
        }),
        job('b', async () => {
          throw new Error('b broke')
        }),
      ],
      context(log),
    )
    expect(await scheduler.runNow('a')).toBe(true)
    expect(ran).toEqual(['a'])
    await expect(scheduler.runNow('b')).rejects.toThrow('b broke')
    await expect(scheduler.runNow('c')).rejects.toThrow(/no background job is named "c"/)
    expect(log.lines).toEqual([])
  })

  it('runNow waits for the run in progress instead of overlapping it', async () => {
    const release = gate()
    let running = 0
    let most = 0
    let runs = 0
    scheduler = new Scheduler(
      [
        job(
          'held',
          async () => {
            runs++
            running++
            most = Math.max(most, running)
            if (runs === 1) await release.opened
            running--
          },
          { intervalMs: 60_000 },
        ),
      ],
      context(memoryLog()),
    )
    scheduler.start()
    expect(await eventually(() => runs === 1)).toBe(true)
    const now = scheduler.runNow('held')
    await sleep(20)
    expect(runs).toBe(1)
    release.open()
    expect(await now).toBe(true)
    expect([runs, most]).toEqual([2, 1])
  })

  it('refuses two jobs of one name', () => {
    const noop = async () => {}
    expect(() => new Scheduler([job('x', noop), job('x', noop)], context(memoryLog()))).toThrow(
      /two background jobs/,
    )
  })
})

describe('leases', () => {
  /** A lease held by "another process" for the names given. */
  function lease(heldElsewhere: string[]) {
    const calls: string[] = []
    const l: JobLease = {
      acquire: async (name, ttlMs) => {
        calls.push(`acquire ${name} ${ttlMs}`)
        return !heldElsewhere.includes(name)
      },
      release: async (name) => {
        calls.push(`release ${name}`)
      },
    }
    return { lease: l, calls }
  }

  it('runs a cluster job only while holding its lease, and releases it on stop', async () => {
    const ran: string[] = []
    const { lease: l, calls } = lease(['theirs'])
    const mk = (name: string, scope: Job['scope']) =>
      job(
        name,
        async () => {
          ran.push(name)
        },
        { scope, intervalMs: 1000 },
      )
    scheduler = new Scheduler(
      [mk('mine', 'cluster'), mk('theirs', 'cluster'), mk('local', 'node')],
      context(memoryLog()),
      {
        lease: l,
      },
    )
    expect(await scheduler.runNow('mine')).toBe(true)
    expect(await scheduler.runNow('theirs')).toBe(false)
    expect(await scheduler.runNow('local')).toBe(true)
    expect(ran).toEqual(['mine', 'local'])
    // A node job never asks; the lease outlives the interval so a live holder keeps it between runs.
    expect(calls).toEqual(['acquire mine 2000', 'acquire theirs 2000'])
    await scheduler.stop()
    expect(calls.slice(2)).toEqual(['release mine'])
  })

  it('without a lease plugged in, this process runs every job', async () => {
    const jobs = backgroundJobs({ feedsReloadMs: 60_000, retentionDays: 400 })
    expect(jobs.some((j) => j.scope === 'cluster')).toBe(true)
    const ran: string[] = []
    scheduler = new Scheduler(
      jobs.map((j) => ({ ...j, run: async () => void ran.push(j.name) })),
      context(memoryLog()),
    )
    for (const j of jobs) expect(await scheduler.runNow(j.name)).toBe(true)
    expect(ran).toEqual(jobs.map((j) => j.name))
  })
})

describe('the job registry', () => {
  it('declares each job once, with what it reads and writes and a positive interval', () => {
    const jobs = backgroundJobs({ feedsReloadMs: 1000, retentionDays: 400 })
    expect(jobs.map((j) => j.name)).toEqual([
      'asn-rates',
      'collision-risk',
      'trap-retention',
      'retention',
      'feed-reload',
      'ja4-signatures',
      'ja4-signatures-cache',
      'storage-compaction',
      'idempotency-expiry',
      'console-session-expiry',
      'velocity-trim',
      'webhook-retention',
      'list-expiry',
      'planner-statistics',
    ])
    for (const j of jobs) {
      expect(j.reads.length, j.name).toBeGreaterThan(0)
      expect(j.writes.length, j.name).toBeGreaterThan(0)
      expect(j.intervalMs, j.name).toBeGreaterThan(0)
    }
    expect(jobs.find((j) => j.name === 'feed-reload')?.intervalMs).toBe(1000)
  })
})
