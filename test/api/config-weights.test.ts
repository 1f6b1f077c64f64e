import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_WEIGHTS } from '../../src/scoring/tenant-config.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/** The defaults, written out: the spec's weights (and ours) must not move when they become keys. */
const EXPECTED_DEFAULTS = {
  datacenterIp: 45,
  proxyVpn: 30,
  deviceReuseLow: 15,
  deviceReuseMed: 30,
  deviceReuseHigh: 45,
  ipVelocityMed: 25,
  ipVelocityHigh: 40,
  emailDisposable: 35,
  emailNoMx: 25,
  emailGibberish: 20,
  emailPlusTag: 10,
  geoMismatch: 20,
  deviceVelocity: 25,
  mailboxReuseMed: 25,
  mailboxReuseHigh: 45,
  accountTakeover: 35,
  privacyRelay: 0,
  emailRelay: 0,
  headlessBrowser: 45,
  deviceInconsistent: 25,
  emulatedEnvironment: 40,
  noiseInjected: 45,
  deviceTampered: 45,
  contextMismatch: 45,
  engineUaMismatch: 40,
  osMismatch: 45,
  antidetectBrowserHigh: 40,
  antidetectBrowserMed: 25,
  timezoneMismatch: 35,
  knownSpoofSignature: 35,
  forgedBeacon: 45,
  appTampered: 40,
  rootedDevice: 20,
  sideloadedApp: 15,
  mockLocation: 30,
  debugEnvironment: 10,
  autoTimeOff: 5,
  vpnActive: 15,
  vpnDrop: 40,
  ipCloaking: 30,
  deviceIpHopping: 25,
  abuseIp: 40,
  abusiveAsn: 35,
  fraudNetworkOne: 20,
  fraudNetworkTwo: 30,
  fraudNetworkMore: 40,
  gibberishWave: 25,
}

describe('default weights', () => {
  it('are exactly the documented ones, every built-in weight a key', () => {
    expect(DEFAULT_WEIGHTS).toEqual(EXPECTED_DEFAULTS)
  })
})

describe.each<Engine>(['sqlite', 'postgres'])(
  'every weight a config key, null removing it, on %s',
  (engine) => {
    let h: Harness
    let t: TestTenant
    let n = 0
    const run = it.skipIf(engine === 'postgres' && !hasPg)
    afterEach(async () => {
      await h?.close()
    })
    const setup = async () => {
      h = await build({ engine })
      t = await h.tenant()
    }
    const api = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
      h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
    const score = async (body: object) =>
      (await api('POST', '/v1/score', { event: 'login', user_id: `w-${++n}`, ...body })).json()
    const weightOf = (r: { checks: { reason: string; weight: number }[] }, code: string) =>
      r.checks.find((c) => c.reason === code)?.weight

    run(
      'once-fixed weights follow the tenant config: device integrity, mobile, antidetect tiers, time zone',
      async () => {
        await setup()
        const cases: [object, string, string, number][] = [
          [{ device: { is_headless: true } }, 'headless_browser', 'headlessBrowser', 45],
          [{ device: { is_tampered: true } }, 'device_tampered', 'deviceTampered', 45],
          [{ device: { ua_consistent: false } }, 'device_inconsistent', 'deviceInconsistent', 25],
          [{ device: { is_rooted: true } }, 'rooted_device', 'rootedDevice', 20],
          [{ device: { is_auto_time_off: true } }, 'auto_time_off', 'autoTimeOff', 5],
          [
            { device: { antidetect_score: 80, antidetect_confidence: 'high' } },
            'antidetect_browser',
            'antidetectBrowserHigh',
            40,
          ],
          [
            { device: { antidetect_score: 80, antidetect_confidence: 'medium' } },
            'antidetect_browser',
            'antidetectBrowserMed',
            25,
          ],
          [{ ip: '81.2.69.142', timezone: 'Asia/Tokyo' }, 'timezone_mismatch', 'timezoneMismatch', 35],
        ]
        for (const [body, code, key, dflt] of cases) {
          expect(weightOf(await score(body), code), `${code} default`).toBe(dflt)
          expect((await api('PUT', '/v1/config', { weights: { [key]: 7 } })).statusCode).toBe(200)
          const tuned = await score(body)
          expect(weightOf(tuned, code), `${code} tuned`).toBe(7)
          expect((await api('PUT', '/v1/config', { weights: { [key]: null } })).statusCode).toBe(200)
          expect(weightOf(await score(body), code), `${code} restored`).toBe(dflt)
        }
      },
    )

    run(
      'null removes an override (weights and thresholds): back to the default, a new version; again: nothing',
      async () => {
        await setup()
        const first = await api('PUT', '/v1/config', {
          weights: { headlessBrowser: 10, datacenterIp: 50 },
          thresholds: { review: 30 },
        })
        expect(first.json()).toMatchObject({
          version: 1,
          overrides: { weights: { headlessBrowser: 10, datacenterIp: 50 }, thresholds: { review: 30 } },
        })
        const removed = await api('PUT', '/v1/config', {
          weights: { headlessBrowser: null },
          thresholds: { review: null },
        })
        expect(removed.statusCode).toBe(200)
        expect(removed.json().version).toBe(2)
        expect(removed.json().overrides).toEqual({ weights: { datacenterIp: 50 }, thresholds: {} })
        expect(removed.json().effective.weights.headlessBrowser).toBe(45)
        expect(removed.json().effective.thresholds.review).toBe(40)
        const rows = await h.store.db.all<{ key: string }>(
          'SELECT key FROM tenant_config WHERE tenant_id = ? ORDER BY key',
          [t.tenantId],
        )
        expect(rows.map((r) => r.key)).toEqual(['datacenterIp'])
        // Removing what is not overridden changes nothing: no new version.
        const again = await api('PUT', '/v1/config', { weights: { headlessBrowser: null, emailNoMx: null } })
        expect(again.json().version).toBe(2)
        expect((await api('GET', '/v1/config')).json().overrides).toEqual({
          weights: { datacenterIp: 50 },
          thresholds: {},
        })
        // A null that would break an ordering is refused like a number: block back to 70 under review 80.
        await api('PUT', '/v1/config', { thresholds: { block: 90, review: 80 } })
        const broken = await api('PUT', '/v1/config', { thresholds: { block: null } })
        expect(broken.statusCode).toBe(400)
        expect(broken.json().error).toBe('thresholds.review (80) must not exceed thresholds.block (70)')
      },
    )

    run('what-if takes null too: the proposal without the override', async () => {
      await setup()
      await api('PUT', '/v1/config', { weights: { headlessBrowser: 100 } })
      await score({ device: { is_headless: true } })
      const sim = await api('POST', '/v1/config/simulate', { weights: { headlessBrowser: null } })
      expect(sim.statusCode).toBe(200)
      expect(sim.json().transitions.block.review).toBe(1)
    })

    run('refuses out-of-range values and unknown keys, naming the field', async () => {
      await setup()
      for (const [body, field] of [
        [{ weights: { headlessBrowser: 101 } }, 'body.weights.headlessBrowser'],
        [{ weights: { headlessBrowser: -1 } }, 'body.weights.headlessBrowser'],
        [{ weights: { headlessBrowser: 'x' } }, 'body.weights.headlessBrowser'],
        [{ weights: { blocklistedUser: 0 } }, 'body.weights'],
      ] as const) {
        const res = await api('PUT', '/v1/config', body)
        expect(res.statusCode, JSON.stringify(body)).toBe(400)
        expect(res.json().error, JSON.stringify(body)).toContain(field)
      }
    })

    run('an event decided under a version saved before a weight was a key replays identically', async () => {
      await setup()
      await api('PUT', '/v1/config', { weights: { datacenterIp: 50 } })
      const r = await score({ device: { is_headless: true, is_tampered: true } })
      // The version as it was recorded before: without the keys this change added.
      const row = await h.store.db.get<{ config: string }>(
        'SELECT config FROM config_versions WHERE tenant_id = ? AND version = 1',
        [t.tenantId],
      )
      const old = JSON.parse(row!.config)
      const added = Object.keys(EXPECTED_DEFAULTS).slice(
        Object.keys(EXPECTED_DEFAULTS).indexOf('privacyRelay'),
      )
      for (const k of added) delete old.weights[k]
      expect(Object.keys(old.weights)).toHaveLength(16)
      await h.store.db.run('UPDATE config_versions SET config = ? WHERE tenant_id = ? AND version = 1', [
        JSON.stringify(old),
        t.tenantId,
      ])
      const replay = (await api('POST', '/v1/replay', { event_id: r.event_id })).json()
      expect(replay.replayed.score).toBe(90)
      expect(replay.identical).toBe(true)
    })
  },
)
