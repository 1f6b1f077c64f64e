import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SESSION_GAP_MS } from '../../src/scoring/checks/device.js'
import { score } from '../../src/scoring/engine.js'
import { type RecordedInput, recordInput, replayInput } from '../../src/scoring/recorded.js'
import { effectiveConfig } from '../../src/scoring/tenant-config.js'
import type { DevicePoint, EngineInput } from '../../src/scoring/types.js'
import { jsonText, packJson, unpackJson } from '../../src/store/events/compact-json.js'
import { input } from './fixtures.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null })
const bool = fc.boolean()
const weight = fc.integer({ min: 0, max: 100 })

const config = fc
  .record({
    weights: fc.record({
      datacenterIp: weight,
      proxyVpn: weight,
      emailDisposable: weight,
      deviceReuseMed: weight,
    }),
    thresholds: fc.record({
      review: fc.integer({ min: 0, max: 60 }),
      block: fc.integer({ min: 60, max: 100 }),
      deviceReuseMed: fc.integer({ min: 1, max: 4 }),
      ipVelocityMed: fc.integer({ min: 1, max: 5 }),
    }),
  })
  .map((o) => effectiveConfig(o))

const ipSignals = fc.record({
  asn: maybe(fc.integer({ min: 1, max: 400_000 })),
  org: maybe(fc.constantFrom('Comcast', 'Amazon.com, Inc.', 'Mullvad VPN AB')),
  geoCountry: maybe(fc.constantFrom('US', 'DE', 'NG', 'BR')),
  isDatacenter: bool,
  datacenterProvider: maybe(fc.constantFrom('aws', 'hetzner')),
  isTor: bool,
  isVpn: bool,
  vpnProvider: maybe(fc.constantFrom('Mullvad', 'Proton VPN')),
  isProxy: bool,
  isPrivacyRelay: bool,
})

const emailSignals = fc.record({
  domain: fc.constantFrom('gmail.com', 'yopmail.com', 'example.org'),
  isDisposable: bool,
  looksGibberish: bool,
  gibberishScore: fc.double({ min: 0, max: 1, noNaN: true }),
  hasPlusTag: bool,
  mx: fc.constantFrom('valid' as const, 'none' as const, 'unknown' as const),
})

const deviceFlags = fc.record(
  {
    is_headless: bool,
    ua_consistent: bool,
    is_tampered: bool,
    is_emulator: bool,
    is_rooted: bool,
    antidetect_score: fc.integer({ min: 0, max: 100 }),
    antidetect_confidence: fc.constantFrom('low' as const, 'medium' as const, 'high' as const),
  },
  { requiredKeys: [] },
)

const connection = maybe(
  fc.constantFrom('datacenter' as const, 'proxy' as const, 'relay' as const, 'residential' as const),
)
/** A few distinct IP hashes, so sessions repeat and hop between them. */
const ipHash = maybe(
  fc.constantFrom(
    'a'.repeat(64),
    'b'.repeat(64),
    'c'.repeat(64),
    'd'.repeat(64),
    'e'.repeat(64),
    'f'.repeat(64),
  ),
)

const NOW = Date.UTC(2026, 10, 23, 12)
const timeline = fc
  .array(
    fc.record({
      gap: fc.oneof(
        fc.integer({ min: 0, max: 5 * 60_000 }),
        fc.constant(SESSION_GAP_MS),
        fc.integer({ min: 0, max: 2 * SESSION_GAP_MS }),
      ),
      ipHash,
      connection,
      beacon: bool,
    }),
    { maxLength: 40 },
  )
  .map((points) => {
    let ms = NOW
    return points.map((p): DevicePoint => {
      ms -= p.gap
      return p.beacon
        ? { ms, ipHash: p.ipHash, connection: p.connection, beacon: true }
        : { ms, ipHash: p.ipHash, connection: p.connection }
    })
  })

const device = fc.record({
  rung: fc.constantFrom(1 as const, 2 as const, 3 as const),
  accounts: fc.integer({ min: 1, max: 30 }),
  accountsSameNetwork: fc.integer({ min: 1, max: 30 }),
  recentEvents: fc.integer({ min: 1, max: 40 }),
  current: fc.record({ ms: fc.constant(NOW), ipHash, connection }),
  timeline,
})

const engineInput: fc.Arbitrary<EngineInput> = fc
  .record({
    config,
    lists: fc.array(
      fc.record({
        list: fc.constantFrom('allow' as const, 'block' as const),
        type: fc.constantFrom('user' as const, 'ip' as const, 'email' as const),
      }),
      { maxLength: 2 },
    ),
    eventCountry: maybe(fc.constantFrom('US', 'DE', 'NG')),
    ipCountry: maybe(fc.constantFrom('US', 'DE', 'NG')),
    ip: maybe(ipSignals),
    email: maybe(emailSignals),
    device: maybe(deviceFlags),
    timezone: maybe(
      fc.record({
        zone: fc.constantFrom('Europe/Berlin', 'UTC'),
        countries: maybe(fc.constant(['DE'] as string[])),
      }),
    ),
    history: fc.record({ ipAccounts: maybe(fc.integer({ min: 1, max: 30 })), device: maybe(device) }),
  })
  .map((r) => input(r))

/** Through storage: the recorded input is kept in the compact JSON form of the event row. */
const stored = (i: EngineInput) => unpackJson<RecordedInput>(packJson(recordInput(i)))

describe('recorded engine inputs', () => {
  it('decide again exactly as the original input did, under the same config', () => {
    let sessionFired = 0
    fc.assert(
      fc.property(engineInput, (i) => {
        const original = score(i)
        const replayed = score(replayInput(stored(i), i.config))
        expect(JSON.stringify(replayed)).toBe(JSON.stringify(original))
        // The checks read back from their compact form as the text replay compares with.
        expect(jsonText(packJson(original.checks))).toBe(JSON.stringify(original.checks))
        if (
          original.reasons.some((r) => r === 'device_ip_hopping' || r === 'vpn_drop' || r === 'ip_cloaking')
        )
          sessionFired++
      }),
      { seed: SEED, numRuns: 3000 },
    )
    // The generator reaches the timeline rules, the part of the input the record trims and renames.
    expect(sessionFired).toBeGreaterThan(0)
  })

  it('keep no IP hash and only the current session of the device timeline', () => {
    const hash = (c: string) => c.repeat(64)
    const point = (ms: number, c: string): DevicePoint => ({ ms, ipHash: hash(c), connection: 'residential' })
    const i = input({
      history: {
        ipAccounts: 1,
        device: {
          rung: 2,
          accounts: 1,
          accountsSameNetwork: 1,
          recentEvents: 3,
          current: point(NOW, 'a'),
          timeline: [
            point(NOW - 60_000, 'b'),
            point(NOW - 120_000, 'a'),
            point(NOW - 120_000 - SESSION_GAP_MS, 'c'),
          ],
        },
      },
    })
    const r = recordInput(i)
    expect(r.history.device?.current.ipHash).toBe('i0')
    expect(r.history.device?.timeline.map((p) => p.ipHash)).toEqual(['i1', 'i0'])
    expect(JSON.stringify(r)).not.toContain(hash('a'))
    expect(r).not.toHaveProperty('config')
  })
})
