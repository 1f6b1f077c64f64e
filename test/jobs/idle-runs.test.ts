import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'

const HOUR = 3_600_000

let h: Harness
afterEach(async () => {
  await h?.close()
})

/**
 * Idle work is proportional to what changed (docs/storage.md, "Idle work after a large history"): once
 * the jobs have caught up with a recorded history, running every one of them again over unchanged data
 * changes no row. SQLite's `total_changes()` counts the rows every INSERT, UPDATE and DELETE of the
 * store's one connection changed. (The history has no device fingerprints: past 50 of them the collision
 * measurement rewrites its rates at every run, one row per platform, since its window moves with time.)
 */
describe('background jobs over an unchanged history (SQLite)', () => {
  it('catch up once, then a second run of every job changes nothing', async () => {
    h = await build()
    const t = await h.tenant({ rateLimit: 100_000 })
    // Three simulated days of history, a batch every four hours (IP → account pairs, counted attributes
    // and rollup hours older than the windows the trim keeps), and a last batch ten minutes ago.
    for (let b = 0; b < 19; b++) {
      const rows = Array.from({ length: 20 }, (_, i) => ({
        event: i % 4 === 0 ? 'signup' : 'login',
        user_id: `u${b}-${i}`,
        ip: `81.2.69.${(b * 20 + i) % 250}`,
        email: `person${b}x${i}@example.com`,
      }))
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/batch/score',
        headers: t.headers,
        payload: { rows },
      })
      expect(res.statusCode).toBe(200)
      h.clock.advance(b < 18 ? 4 * HOUR : 10 * 60_000)
    }
    const changes = async () =>
      Number((await h.store.db.get<{ n: number }>('SELECT total_changes() AS n'))?.n)
    const pairs = async () =>
      Number((await h.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM ip_accounts'))?.n)
    expect(await pairs()).toBe(380)

    // The first runs catch up: the velocity trim deletes the pairs not seen in the last hour.
    const before = await changes()
    for (const job of h.jobs.jobs) expect(await h.jobs.runNow(job.name)).toBe(true)
    expect(await changes()).toBeGreaterThan(before)
    expect(await pairs()).toBe(20)

    // Nothing changed since, a minute later: no job writes a row.
    h.clock.advance(60_000)
    const caughtUp = await changes()
    for (const job of h.jobs.jobs) expect(await h.jobs.runNow(job.name)).toBe(true)
    expect(await changes()).toBe(caughtUp)
  })
})
