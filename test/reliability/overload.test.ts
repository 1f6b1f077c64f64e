import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('load shedding', () => {
  it('a burst of 5,000 scores against a stalled store: every answer 200 or 503, memory bounded, then recovery', async () => {
    h = await build({ overload: { maxQueue: 200 } })
    const t = await h.tenant({ rateLimit: 10_000_000, monthlyQuota: 10_000_000 })
    const score = (i: number) =>
      h!.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'login', user_id: `burst-${i}`, ip: '81.2.69.160' },
      })
    expect((await score(-1)).statusCode).toBe(200)
    // Another connection holds the write lock: the store stalls as a slow disk or a long writer would.
    const blocker = new Database(join(h.dir, 'verdict.db'))
    blocker.exec('BEGIN IMMEDIATE')
    const rssBefore = process.memoryUsage().rss
    // The burst arrives over a moment, as from many clients, while the store is stalled; then it recovers.
    const burst: ReturnType<typeof score>[] = []
    for (let i = 0; i < 5_000; i++) {
      burst.push(score(i))
      if (i % 250 === 249) await new Promise((r) => setTimeout(r, 20))
    }
    blocker.exec('ROLLBACK')
    blocker.close()
    const answers = await Promise.all(burst)
    const rssAfter = process.memoryUsage().rss
    const byStatus = new Map<number, number>()
    for (const a of answers) byStatus.set(a.statusCode, (byStatus.get(a.statusCode) ?? 0) + 1)
    console.log(
      `overload burst: ${JSON.stringify(Object.fromEntries(byStatus))}, RSS +${Math.round((rssAfter - rssBefore) / 2 ** 20)} MB`,
    )
    expect([...byStatus.keys()].every((s) => s === 200 || s === 503)).toBe(true)
    const shed = answers.filter((a) => a.statusCode === 503 && a.json().error.startsWith('overloaded'))
    expect(shed.length).toBeGreaterThan(0)
    expect(shed[0]!.headers['retry-after']).toBe('1')
    expect(shed[0]!.json().code).toBe('unavailable')
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(0)
    expect(rssAfter - rssBefore).toBeLessThan(512 * 2 ** 20)
    // Every 200 is a recorded event, every 503 recorded nothing.
    const events = (await h.app.inject({ url: '/v1/events?limit=1', headers: t.headers })).json().total
    expect(events).toBe(1 + (byStatus.get(200) ?? 0))
    // Health still answers while the service sheds, and the next request goes through.
    expect((await h.app.inject({ url: '/v1/health' })).statusCode).toBe(200)
    expect((await score(99_999)).statusCode).toBe(200)
  })
})
