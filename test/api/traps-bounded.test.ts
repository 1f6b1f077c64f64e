import { afterEach, describe, expect, it } from 'vitest'
import { TRAP_DEDUP_MS, TRAP_IP_CAP, TRAP_WINDOW_MS } from '../../src/store/network/network.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

describe.each<Engine>(['sqlite', 'postgres'])('stored trap hits are bounded on %s', (engine) => {
  const run = it.skipIf(engine === 'postgres' && !hasPg)
  let h: Harness
  let t: TestTenant
  afterEach(async () => {
    await h?.close()
  })
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant({ rateLimit: 100_000 })
  }

  const honeypot = async (ip: string, who = t) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/check/ip',
      headers: who.headers,
      payload: { ip },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().reputation.honeypot_hits as number
  }
  const probe = async (url: string, ip: string) => {
    expect((await h.app.inject({ url, remoteAddress: ip })).statusCode).toBe(404)
  }
  /** Records through the store, as the CLI import does: no per-minute limiter in the way. */
  const record = (ip: string, path: string, atMs: number) =>
    h.store.db.tx(() =>
      h.store.network.addTrapHit({
        ipHash: h.hasher.entity('ip', ip),
        ipPrefix: '198.51.100.0/24',
        path,
        source: 'import',
        atMs,
      }),
    )
  const stored = async () =>
    Number((await h.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM trap_hits'))?.n)

  run(
    'the same IP and path within an hour either side is stored once; more than an hour later, again',
    async () => {
      await setup()
      const ip = '198.51.100.20'
      const t0 = h.clock.now()
      await probe('/.env', ip)
      expect(await honeypot(ip)).toBe(1)
      h.clock.advance(30 * MINUTE)
      await probe('/.env', ip)
      expect(await honeypot(ip)).toBe(1)
      // Another path is another hit.
      await probe('/wp-login.php', ip)
      expect(await honeypot(ip)).toBe(2)
      // An imported hit dated within the hour before a stored one is a duplicate too.
      expect(await record(ip, '/.env', t0 - 40 * MINUTE)).toBe(false)
      expect(await record(ip, '/.env', t0 - TRAP_DEDUP_MS - 1)).toBe(true)
      h.clock.set(t0 + 61 * MINUTE)
      await probe('/.env', ip)
      expect(await honeypot(ip)).toBe(4)
      expect(await stored()).toBe(4)
    },
  )

  run(
    `an IP past ${TRAP_IP_CAP} hits in the window stores no more, until old hits leave the window`,
    async () => {
      await setup()
      const ip = '198.51.100.30'
      const start = h.clock.now()
      // Two hours apart: never duplicates of each other, all within the 30-day window.
      for (let i = 0; i < TRAP_IP_CAP; i++) expect(await record(ip, '/.env', start + i * 2 * HOUR)).toBe(true)
      const last = start + (TRAP_IP_CAP - 1) * 2 * HOUR
      h.clock.set(last + 3 * HOUR)
      expect(await record(ip, '/.env', h.clock.now())).toBe(false)
      await probe('/wp-admin', ip)
      expect(await honeypot(ip)).toBe(TRAP_IP_CAP)
      // Another IP is not affected.
      await probe('/wp-admin', '198.51.100.31')
      expect(await honeypot('198.51.100.31')).toBe(1)
      // Once the oldest hits are older than the window, there is room again.
      h.clock.set(start + TRAP_WINDOW_MS + 3 * HOUR)
      expect(await record(ip, '/.env', h.clock.now())).toBe(true)
    },
  )

  run('pruneTraps deletes hits older than 30 days and keeps the rest', async () => {
    await setup()
    const now = h.clock.now()
    expect(await record('198.51.100.40', '/.env', now - 40 * DAY)).toBe(true)
    expect(await record('198.51.100.40', '/.env', now - 31 * DAY)).toBe(true)
    expect(await record('198.51.100.40', '/.env', now - 29 * DAY)).toBe(true)
    expect(await record('198.51.100.41', '/.env', now - HOUR)).toBe(true)
    expect(await h.store.network.pruneTraps(now)).toBe(2)
    expect(await stored()).toBe(2)
    expect(await honeypot('198.51.100.40')).toBe(1)
    expect(await honeypot('198.51.100.41')).toBe(1)
    expect(await h.store.network.pruneTraps(now)).toBe(0)
  })

  run("a tenant's legit label hides the IP's trap hits from that tenant's scores only", async () => {
    await setup()
    const other = await h.tenant()
    const ip = '198.51.100.50'
    await probe('/.env', ip)
    await probe('/wp-login.php', ip)
    const score = async (who: TestTenant) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: who.headers,
        payload: { event: 'login', user_id: 'customer-1', ip },
      })
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as { event_id: string; reasons: string[] }
    }
    const first = await score(t)
    expect(first.reasons).toContain('abuse_ip')
    const labelled = await h.app.inject({
      method: 'POST',
      url: '/v1/label',
      headers: t.headers,
      payload: { label: 'legit', event_id: first.event_id },
    })
    expect(labelled.statusCode, labelled.body).toBe(200)
    expect((await score(t)).reasons).not.toContain('abuse_ip')
    expect((await score(other)).reasons).toContain('abuse_ip')
    // The hits themselves stay: the label is local to the tenant.
    expect(await stored()).toBe(2)
    expect(await honeypot(ip, other)).toBe(2)
  })
})
