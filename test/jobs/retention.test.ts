import { afterEach, describe, expect, it } from 'vitest'
import { RETENTION_BATCH, retentionJob } from '../../src/jobs/retention.js'
import { Scheduler } from '../../src/jobs/scheduler.js'
import { type LinkKind, linksOf, type ObservationLinkSource } from '../../src/store/devices/links.js'
import { retentionCutoff } from '../../src/store/schema/retention.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const DAY = 86_400_000
const NOW = Date.UTC(2026, 10, 23, 12, 30, 0)

let h: Harness
afterEach(async () => {
  await h?.close()
})

describe.each<Engine>(['sqlite', 'postgres'])('retention on %s', (engine) => {
  it.skipIf(engine === 'postgres' && !hasPg)(
    'deletes events, their observations, lookups, device links and aggregates past the period; stats and links agree with what remains',
    async () => {
      h = await build({ engine })
      const t = await h.tenant({ rateLimit: 100_000 })
      const other = await h.tenant({ rateLimit: 100_000 })
      const score = (headers: Record<string, string>, i: number) =>
        h.app.inject({
          method: 'POST',
          url: '/v1/score',
          headers,
          payload: { event: 'login', user_id: `u${i}`, ip: '81.2.69.160', device_id: 'd'.repeat(32) },
        })
      const check = (headers: Record<string, string>) =>
        h.app.inject({ method: 'POST', url: '/v1/check', headers, payload: { ip: '81.2.69.160' } })
      // Old: 45 days back (past a 30-day period); recent: 2 days back. The batch covers several rounds.
      h.clock.set(NOW - 45 * DAY)
      const rows = Array.from({ length: RETENTION_BATCH + 5 }, (_, i) => ({
        event: 'login',
        user_id: `old${i}`,
      }))
      for (let i = 0; i < rows.length; i += 1000) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/batch/score',
          headers: t.headers,
          payload: { rows: rows.slice(i, i + 1000) },
        })
        expect(res.statusCode).toBe(200)
      }
      for (let i = 0; i < 3; i++) expect((await score(t.headers, i)).statusCode).toBe(200)
      expect((await check(t.headers)).statusCode).toBe(200)
      expect((await score(other.headers, 99)).statusCode).toBe(200)
      h.clock.set(NOW - 2 * DAY)
      for (let i = 10; i < 14; i++) expect((await score(t.headers, i)).statusCode).toBe(200)
      expect((await check(t.headers)).statusCode).toBe(200)
      h.clock.set(NOW)

      // A beacon observation on each side of the cutoff (written as the beacon route writes them).
      for (const at of [NOW - 45 * DAY, NOW - 2 * DAY])
        await h.store.db.run(
          `INSERT INTO beacon_observations (tenant_id, device_id, visit_id, created_ms, ip_hash, os, browser, mobile, flags)
           VALUES (?, ?, ?, ?, NULL, NULL, NULL, 0, '{}')`,
          [t.tenantId, 'e'.repeat(64), `v${at}`, at],
        )
      const cutoff = retentionCutoff(NOW, 30)
      const count = async (sql: string, params: (string | number)[] = []) =>
        Number((await h.store.db.get<{ n: number }>(sql, params))?.n)
      expect(await count('SELECT COUNT(*) AS n FROM events WHERE created_ms < ?', [cutoff])).toBe(
        rows.length + 4,
      )

      // Device links: some were made only by the old observations, some by old and recent ones.
      const links = async () =>
        (
          await h.store.db.all<{ tenant_id: string; kind: string; key: string; member: string }>(
            'SELECT tenant_id, kind, key, member FROM device_links',
          )
        )
          .map((l) => `${l.tenant_id} ${l.kind} ${l.key} ${l.member}`)
          .sort()
      const before = await links()
      // One bounded batch takes exactly its size.
      expect(await h.store.retention.deviceLinks(t.tenantId, cutoff, 1)).toBe(1)
      expect(await links()).toHaveLength(before.length - 1)

      const jobs = new Scheduler([retentionJob(30)], {
        store: h.store,
        clock: h.clock,
        log: { info: () => {}, warn: () => {} },
      } as never)
      expect(await jobs.runNow('retention')).toBe(true)

      expect(await count('SELECT COUNT(*) AS n FROM beacon_observations')).toBe(1)
      for (const table of ['events', 'device_observations', 'lookups', 'beacon_observations'])
        expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE created_ms < ?`, [cutoff])).toBe(0)
      expect(await count('SELECT COUNT(*) AS n FROM event_rollup WHERE hour_ms < ?', [cutoff])).toBe(0)
      expect(await count('SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?', [t.tenantId])).toBe(4)
      expect(await count('SELECT COUNT(*) AS n FROM device_observations')).toBe(4)
      expect(await count('SELECT COUNT(*) AS n FROM lookups')).toBe(1)
      // The links that remain are exactly those the remaining observations make, and the fingerprint →
      // token counters count them.
      const remaining = await h.store.db.all<ObservationLinkSource & { tenant_id: string }>(
        'SELECT tenant_id, device_id, token_id, user_id, ip_hash, ip_prefix, rung FROM device_observations',
      )
      const expected = [
        ...new Set(
          remaining.flatMap((o) => linksOf(o).map((l) => `${o.tenant_id} ${l.kind} ${l.key} ${l.member}`)),
        ),
      ].sort()
      expect(expected.length).toBeGreaterThan(0)
      expect(before.length).toBeGreaterThan(expected.length)
      expect(await links()).toEqual(expected)
      const counters = await h.store.db.all<{ key: string; n: number }>(
        "SELECT key, n FROM device_link_counts WHERE kind = 'ft'",
      )
      const ft: LinkKind = 'ft'
      for (const c of counters)
        expect(Number(c.n)).toBe(
          expected.filter((l) => l.split(' ')[1] === ft && l.split(' ')[2] === c.key).length,
        )
      // Stats over the whole window that remains count exactly the remaining events.
      const stats = await h.app.inject({ url: '/v1/stats?window_hours=8760', headers: t.headers })
      expect(stats.statusCode).toBe(200)
      const body = stats.json() as { total: number }
      expect(body.total).toBe(4)
      const events = await h.app.inject({ url: '/v1/events?limit=200', headers: t.headers })
      expect((events.json() as { total: number }).total).toBe(4)
      await jobs.stop()
    },
    60_000,
  )
})
