import { describe, expect, it } from 'vitest'
import { currentSession, SESSION_GAP_MS } from '../../src/scoring/checks/device.js'
import { score } from '../../src/scoring/engine.js'
import { effectiveConfig } from '../../src/scoring/tenant-config.js'
import type { ConnectionClass, DeviceHistory, DevicePoint } from '../../src/scoring/types.js'
import { input } from './fixtures.js'

const NOW = Date.UTC(2026, 0, 15, 12)
const point = (minutesAgo: number, ip: string | null, connection: ConnectionClass | null): DevicePoint => ({
  ms: NOW - minutesAgo * 60_000,
  ipHash: ip,
  connection,
})

function device(over: Partial<DeviceHistory> = {}): DeviceHistory {
  return {
    rung: 2,
    accounts: 1,
    accountsSameNetwork: 1,
    recentEvents: 1,
    current: point(0, 'ip-now', 'residential'),
    timeline: [],
    ...over,
  }
}

const fired = (d: DeviceHistory, config = effectiveConfig({ weights: {}, thresholds: {} })) =>
  Object.fromEntries(
    score(input({ config, history: { ipAccounts: null, device: d } })).checks.map((c) => [
      c.reason,
      c.weight,
    ]),
  )

describe('device_reuse tiers', () => {
  const rows: [string, Partial<DeviceHistory>, number | undefined][] = [
    ['1 account', { accounts: 1 }, undefined],
    ['2 accounts, fingerprint only: low', { accounts: 2 }, 15],
    ['3 accounts: low', { accounts: 3, accountsSameNetwork: 2 }, 15],
    ['4 accounts: medium', { accounts: 4 }, 30],
    ['9 accounts: medium', { accounts: 9 }, 30],
    ['10 accounts: high', { accounts: 10 }, 45],
    ['2 accounts at rung 1: low corroborated', { rung: 1, accounts: 2 }, 25],
    ['4 accounts at rung 1: medium corroborated', { rung: 1, accounts: 4 }, 40],
    ['10 accounts at rung 1: high corroborated', { rung: 1, accounts: 10 }, 55],
    ['3 accounts on one network: low corroborated', { accounts: 3, accountsSameNetwork: 3 }, 25],
    ['5 accounts, 3 on one network: medium corroborated', { accounts: 5, accountsSameNetwork: 3 }, 40],
    ['40 accounts, 30 on one network: high corroborated', { accounts: 40, accountsSameNetwork: 30 }, 55],
    ['rung 3 links nothing', { rung: 3, accounts: 50 }, undefined],
  ]
  it.each(rows)('%s', (_name, over, weight) => {
    expect(fired(device(over)).device_reuse).toBe(weight)
  })

  it("names one browser's undivided count in its evidence and message, and weighs it like any count", () => {
    const c = score(
      input({
        history: { ipAccounts: null, device: device({ rung: 1, accounts: 6, accountsOneBrowser: 6 }) },
      }),
    ).checks.find((x) => x.reason === 'device_reuse')
    expect(c).toMatchObject({
      weight: 40,
      evidence: { accounts: 6, accounts_one_browser: 6, tier: 'medium' },
    })
    expect(c?.message).toBe(
      '6 different accounts have used the same device, identified by one browser that cleared its cookie between them.',
    )
    const plain = score(input({ history: { ipAccounts: null, device: device({ rung: 1, accounts: 6 }) } }))
    expect(plain.checks[0]?.evidence).not.toHaveProperty('accounts_one_browser')
  })

  it('never reaches the default block threshold alone', () => {
    for (const rung of [1, 2] as const) {
      for (const accounts of [2, 4, 10, 100]) {
        const r = score(
          input({
            history: { ipAccounts: null, device: device({ rung, accounts, accountsSameNetwork: accounts }) },
          }),
        )
        expect(r.score).toBeLessThan(70)
      }
    }
  })

  it('takes tiers and weights from the tenant config', () => {
    const config = effectiveConfig({
      weights: { deviceReuseLow: 5, deviceReuseMed: 7, deviceReuseHigh: 9 },
      thresholds: { deviceReuseMed: 3, deviceReuseHigh: 5 },
    })
    expect(fired(device({ accounts: 2 }), config).device_reuse).toBe(5)
    expect(fired(device({ accounts: 3 }), config).device_reuse).toBe(7)
    expect(fired(device({ accounts: 5 }), config).device_reuse).toBe(9)
    expect(fired(device({ rung: 1, accounts: 5 }), config).device_reuse).toBe(19)
    const check = score(input({ config, history: { ipAccounts: null, device: device({ accounts: 3 }) } }))
      .checks[0]
    expect(check).toMatchObject({ check: 'deviceReuse', key: 'deviceReuseMed' })
    expect(check?.evidence).toMatchObject({ accounts: 3, tier: 'medium', threshold: 3, corroborated: false })
  })
})

describe('device_velocity', () => {
  it('fires at the configured number of events in 10 minutes', () => {
    expect(fired(device({ recentEvents: 19 })).device_velocity).toBeUndefined()
    expect(fired(device({ recentEvents: 20 })).device_velocity).toBe(25)
    const config = effectiveConfig({ weights: { deviceVelocity: 12 }, thresholds: { deviceVelocity: 3 } })
    expect(fired(device({ recentEvents: 3 }), config).device_velocity).toBe(12)
    expect(fired(device({ recentEvents: 2 }), config).device_velocity).toBeUndefined()
  })
})

describe('session behaviour', () => {
  const rows: [string, DevicePoint, DevicePoint[], Record<string, number>][] = [
    [
      'vpn_drop: residential after datacenter',
      point(0, 'b', 'residential'),
      [point(5, 'a', 'datacenter')],
      { vpn_drop: 40 },
    ],
    [
      'vpn_drop: residential after proxy',
      point(0, 'b', 'residential'),
      [point(1, 'a', 'proxy')],
      { vpn_drop: 40 },
    ],
    [
      'ip_cloaking: datacenter after residential',
      point(0, 'b', 'datacenter'),
      [point(2, 'a', 'residential')],
      { ip_cloaking: 30 },
    ],
    [
      'ip_cloaking: proxy after residential',
      point(0, 'b', 'proxy'),
      [point(2, 'a', 'residential')],
      { ip_cloaking: 30 },
    ],
    ['no drop across a session gap', point(0, 'b', 'residential'), [point(30, 'a', 'datacenter')], {}],
    [
      'drop just inside the gap',
      point(0, 'b', 'residential'),
      [point(29, 'a', 'datacenter')],
      { vpn_drop: 40 },
    ],
    [
      'a relay hop in between is skipped, not counted',
      point(0, 'c', 'residential'),
      [point(1, 'r', 'relay'), point(2, 'a', 'datacenter')],
      { vpn_drop: 40 },
    ],
    ['relay after residential is no cloaking', point(0, 'r', 'relay'), [point(1, 'a', 'residential')], {}],
    ['residential after relay is no drop', point(0, 'a', 'residential'), [point(1, 'r', 'relay')], {}],
    ['datacenter after datacenter', point(0, 'b', 'datacenter'), [point(1, 'a', 'datacenter')], {}],
    ['first observation', point(0, 'b', 'residential'), [], {}],
    [
      '5 distinct IPs in one session hop',
      point(0, 'e', 'residential'),
      [
        point(1, 'd', 'residential'),
        point(2, 'c', 'residential'),
        point(3, 'b', 'residential'),
        point(4, 'a', 'residential'),
      ],
      { device_ip_hopping: 25 },
    ],
    [
      '4 distinct IPs plus relays do not hop',
      point(0, 'd', 'residential'),
      [
        point(1, 'r1', 'relay'),
        point(2, 'c', 'residential'),
        point(3, 'r2', 'relay'),
        point(4, 'b', 'residential'),
        point(5, 'a', 'residential'),
        point(6, 'r3', 'relay'),
      ],
      {},
    ],
    [
      'IPs of an earlier session do not hop',
      point(0, 'e', 'residential'),
      [
        point(1, 'd', 'residential'),
        point(2, 'c', 'residential'),
        point(40, 'b', 'residential'),
        point(41, 'a', 'residential'),
      ],
      {},
    ],
    [
      'repeated IPs count once',
      point(0, 'a', 'residential'),
      [
        point(1, 'b', 'residential'),
        point(2, 'a', 'residential'),
        point(3, 'b', 'residential'),
        point(4, 'c', 'residential'),
      ],
      {},
    ],
  ]
  it.each(rows)('%s', (_name, current, timeline, expected) => {
    const f = fired(device({ current, timeline }))
    expect(f).toEqual(expected)
  })

  it('never fires at rung 3', () => {
    expect(
      fired(
        device({ rung: 3, current: point(0, 'b', 'residential'), timeline: [point(1, 'a', 'datacenter')] }),
      ),
    ).toEqual({})
  })

  it('cuts the session at the first gap of 30 minutes or more', () => {
    const d = device({ timeline: [point(10, 'a', null), point(39, 'b', null), point(69, 'c', null)] })
    expect(currentSession(d).map((p) => p.ipHash)).toEqual(['a', 'b'])
    expect(SESSION_GAP_MS).toBe(30 * 60_000)
  })
})
