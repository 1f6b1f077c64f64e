import { describe, expect, it } from 'vitest'
import { poissonTail } from '../../src/scoring/checks/account.js'
import { score, verdictFor } from '../../src/scoring/engine.js'
import { templateExplanation } from '../../src/scoring/explain.js'
import { effectiveConfig } from '../../src/scoring/tenant-config.js'
import type { EngineInput } from '../../src/scoring/types.js'
import { input, residential } from './fixtures.js'

const email = {
  domain: 'example.com',
  isDisposable: false,
  looksGibberish: false,
  gibberishScore: 0.1,
  hasPlusTag: false,
  mx: 'valid' as const,
}

/**
 * An engine input for `gibberish_wave`: the recent firings and events, and the same hours of the seven
 * days before (100 events each unless given).
 */
const waveInput = (
  recent: number,
  recentEvents: number,
  sameHours: number[],
  sameHoursEvents: number[] = Array(7).fill(100),
  looksGibberish = true,
): Partial<EngineInput> => ({
  email: { ...email, looksGibberish },
  history: { ipAccounts: null, generatedMailboxes: { recent, recentEvents, sameHours, sameHoursEvents } },
})

interface Row {
  name: string
  input: Partial<EngineInput>
  /** reason → weight expected; every other reason must be absent. */
  fires: Record<string, number>
}

const ROWS: Row[] = [
  { name: 'nothing known', input: {}, fires: {} },
  { name: 'residential IP', input: { ip: residential }, fires: {} },
  {
    name: 'datacenter IP',
    input: { ip: { ...residential, isDatacenter: true, datacenterProvider: 'Amazon Web Services' } },
    fires: { datacenter_ip: 45 },
  },
  {
    name: 'named VPN',
    input: { ip: { ...residential, isVpn: true, vpnProvider: 'Mullvad' } },
    fires: { vpn_ip: 30 },
  },
  { name: 'unnamed VPN is a proxy', input: { ip: { ...residential, isVpn: true } }, fires: { proxy_ip: 30 } },
  { name: 'open proxy', input: { ip: { ...residential, isProxy: true } }, fires: { proxy_ip: 30 } },
  { name: 'tor exit', input: { ip: { ...residential, isTor: true } }, fires: { proxy_ip: 30 } },
  {
    name: 'VPN and proxy: one code only',
    input: { ip: { ...residential, isVpn: true, vpnProvider: 'NordVPN', isProxy: true } },
    fires: { vpn_ip: 30 },
  },
  {
    name: 'named VPN exit on a hosting network: the VPN only',
    input: { ip: { ...residential, isDatacenter: true, isVpn: true, vpnProvider: 'Mullvad' } },
    fires: { vpn_ip: 30 },
  },
  {
    name: 'unnamed VPN exit on a hosting network: datacenter and proxy',
    input: { ip: { ...residential, isDatacenter: true, isVpn: true } },
    fires: { datacenter_ip: 45, proxy_ip: 30 },
  },
  {
    name: 'privacy relay wins over datacenter/proxy/vpn',
    input: {
      ip: {
        ...residential,
        isPrivacyRelay: true,
        isDatacenter: true,
        isProxy: true,
        isVpn: true,
        vpnProvider: 'x',
      },
    },
    fires: { privacy_relay: 0 },
  },
  {
    name: 'geo mismatch from geolocation',
    input: { ip: residential, eventCountry: 'DE' },
    fires: { geo_mismatch: 20 },
  },
  { name: 'geo match, case-insensitive', input: { ip: residential, eventCountry: 'us' }, fires: {} },
  {
    name: 'geo: header country beats geolocation',
    input: { ip: residential, ipCountry: 'DE', eventCountry: 'DE' },
    fires: {},
  },
  {
    name: 'geo: header country without IP',
    input: { ipCountry: 'FR', eventCountry: 'DE' },
    fires: { geo_mismatch: 20 },
  },
  { name: 'geo: no expected country', input: { ip: residential }, fires: {} },
  {
    name: 'disposable email',
    input: { email: { ...email, isDisposable: true } },
    fires: { disposable_email: 35 },
  },
  { name: 'no MX (definite)', input: { email: { ...email, mx: 'none' } }, fires: { email_no_mx: 25 } },
  { name: 'MX unknown never fires', input: { email: { ...email, mx: 'unknown' } }, fires: {} },
  {
    name: 'gibberish mailbox',
    input: { email: { ...email, looksGibberish: true, gibberishScore: 0.9 } },
    fires: { gibberish_email: 20 },
  },
  { name: 'plus tag', input: { email: { ...email, hasPlusTag: true } }, fires: { plus_addressing: 10 } },
  { name: 'headless', input: { device: { is_headless: true } }, fires: { headless_browser: 45 } },
  {
    name: 'ua inconsistent',
    input: { device: { ua_consistent: false } },
    fires: { device_inconsistent: 25 },
  },
  { name: 'ua consistent', input: { device: { ua_consistent: true, is_headless: false } }, fires: {} },
  { name: 'emulated', input: { device: { is_emulated: true } }, fires: { emulated_environment: 40 } },
  {
    name: 'mobile emulator is an emulated environment',
    input: { device: { is_emulator: true } },
    fires: { emulated_environment: 40 },
  },
  {
    name: 'emulated + emulator: one check',
    input: { device: { is_emulated: true, is_emulator: true } },
    fires: { emulated_environment: 40 },
  },
  { name: 'noise', input: { device: { is_noise_injected: true } }, fires: { noise_injected: 45 } },
  { name: 'tampered', input: { device: { is_tampered: true } }, fires: { device_tampered: 45 } },
  { name: 'context', input: { device: { is_context_mismatch: true } }, fires: { context_mismatch: 45 } },
  { name: 'engine', input: { device: { is_engine_mismatch: true } }, fires: { engine_ua_mismatch: 40 } },
  { name: 'os', input: { device: { is_os_mismatch: true } }, fires: { os_mismatch: 45 } },
  {
    name: 'font standardisation is informational only',
    input: { device: { is_font_standardized: true } },
    fires: {},
  },
  {
    name: 'antidetect high',
    input: { device: { antidetect_score: 80, antidetect_confidence: 'high' } },
    fires: { antidetect_browser: 40 },
  },
  {
    name: 'antidetect medium',
    input: { device: { antidetect_score: 50, antidetect_confidence: 'medium' } },
    fires: { antidetect_browser: 25 },
  },
  {
    name: 'antidetect low confidence',
    input: { device: { antidetect_score: 100, antidetect_confidence: 'low' } },
    fires: {},
  },
  {
    name: 'antidetect below 50',
    input: { device: { antidetect_score: 49, antidetect_confidence: 'high' } },
    fires: {},
  },
  { name: 'hooked', input: { device: { is_hooked: true } }, fires: { app_tampered: 40 } },
  { name: 'cloned', input: { device: { is_cloned: true } }, fires: { app_tampered: 40 } },
  { name: 'rooted', input: { device: { is_rooted: true } }, fires: { rooted_device: 20 } },
  { name: 'sideloaded', input: { device: { is_sideloaded: true } }, fires: { sideloaded_app: 15 } },
  { name: 'mock location', input: { device: { is_mock_location: true } }, fires: { mock_location: 30 } },
  { name: 'adb', input: { device: { is_adb_enabled: true } }, fires: { debug_environment: 10 } },
  { name: 'debuggable', input: { device: { is_debuggable: true } }, fires: { debug_environment: 10 } },
  { name: 'auto time off', input: { device: { is_auto_time_off: true } }, fires: { auto_time_off: 5 } },
  {
    name: 'client VPN flag',
    input: { ip: residential, device: { is_vpn_active: true } },
    fires: { vpn_active: 15 },
  },
  {
    name: 'client VPN flag already seen by network',
    input: {
      ip: { ...residential, isVpn: true, vpnProvider: 'Proton VPN' },
      device: { is_vpn_active: true },
    },
    fires: { vpn_ip: 30 },
  },
  {
    name: 'client VPN flag on a relay',
    input: { ip: { ...residential, isPrivacyRelay: true }, device: { is_vpn_active: true } },
    fires: { privacy_relay: 0 },
  },
  {
    name: 'timezone mismatch',
    input: { ip: residential, timezone: { zone: 'Europe/Berlin', countries: ['DE'] } },
    fires: { timezone_mismatch: 35 },
  },
  {
    name: 'traveller: clock of the expected country, IP abroad: counted once, as geo_mismatch',
    input: { ip: residential, eventCountry: 'DE', timezone: { zone: 'Europe/Berlin', countries: ['DE'] } },
    fires: { geo_mismatch: 20 },
  },
  {
    name: 'clock of a third country: geo and time zone both fire',
    input: { ip: residential, eventCountry: 'DE', timezone: { zone: 'Asia/Manila', countries: ['PH'] } },
    fires: { geo_mismatch: 20, timezone_mismatch: 35 },
  },
  {
    name: 'clock elsewhere, IP where expected: time zone only',
    input: { ip: residential, eventCountry: 'US', timezone: { zone: 'Europe/Berlin', countries: ['DE'] } },
    fires: { timezone_mismatch: 35 },
  },
  {
    name: 'timezone match',
    input: { ip: residential, timezone: { zone: 'America/New_York', countries: ['US'] } },
    fires: {},
  },
  {
    name: 'timezone country-less (UTC)',
    input: { ip: residential, timezone: { zone: 'UTC', countries: null } },
    fires: {},
  },
  {
    name: 'timezone with header country',
    input: { ipCountry: 'DE', timezone: { zone: 'Europe/Berlin', countries: ['DE'] } },
    fires: {},
  },
  {
    name: 'e-mail relay alias: informational only',
    input: { email: { ...email, domain: 'mozmail.com', relay: 'Firefox Relay' } },
    fires: { email_relay: 0 },
  },
  {
    name: 'one account on its mailbox',
    input: { history: { ipAccounts: null, mailboxAccounts: 1 } },
    fires: {},
  },
  {
    name: 'mailbox shared by 2 accounts',
    input: { history: { ipAccounts: null, mailboxAccounts: 2 } },
    fires: { mailbox_reuse: 25 },
  },
  {
    name: 'mailbox shared by 4 accounts',
    input: { history: { ipAccounts: null, mailboxAccounts: 4 } },
    fires: { mailbox_reuse: 45 },
  },
  {
    name: 'established account, new device and new country',
    input: {
      history: {
        ipAccounts: null,
        account: { events: 2, firstMs: 0, nowMs: 86_400_000, deviceSeen: false, countrySeen: false },
      },
    },
    fires: { account_takeover: 35 },
  },
  {
    name: 'established account, known device abroad',
    input: {
      history: {
        ipAccounts: null,
        account: { events: 5, firstMs: 0, nowMs: 9e8, deviceSeen: true, countrySeen: false },
      },
    },
    fires: {},
  },
  {
    name: 'account younger than a day',
    input: {
      history: {
        ipAccounts: null,
        account: { events: 5, firstMs: 0, nowMs: 86_399_999, deviceSeen: false, countrySeen: false },
      },
    },
    fires: {},
  },
  {
    name: 'generated mailbox in a wave: 3 in 6 hours, none at these hours on the days before',
    input: waveInput(3, 100, [0, 0, 0, 0, 0, 0, 0]),
    fires: { gibberish_email: 20, gibberish_wave: 25 },
  },
  {
    name: 'generated mailbox, 2 in 6 hours: below the wave threshold',
    input: waveInput(2, 100, [0, 0, 0, 0, 0, 0, 0]),
    fires: { gibberish_email: 20 },
  },
  {
    // One busy day before (an earlier campaign) does not raise the bar: the quietest day sets it.
    name: 'generated mailbox wave after an earlier campaign',
    input: waveInput(3, 100, [40, 0, 5, 0, 0, 0, 0]),
    fires: { gibberish_email: 20, gibberish_wave: 25 },
  },
  {
    // 1 % of the events on the quietest day: 1 expected of 100; 6 happen by chance 0.06 % of the time, 7 only 0.008 %.
    name: 'generated mailboxes at 6 where 1 is expected: possible by chance',
    input: waveInput(6, 100, [1, 2, 1, 3, 1, 1, 2]),
    fires: { gibberish_email: 20 },
  },
  {
    name: 'generated mailboxes at 7 where 1 is expected: a wave',
    input: waveInput(7, 100, [1, 2, 1, 3, 1, 1, 2]),
    fires: { gibberish_email: 20, gibberish_wave: 25 },
  },
  {
    // 10 % on the quietest day: 10 expected of 100, so a wave needs 30; 29 is improbable but not enough.
    name: 'generated mailboxes below 3 times the expected count',
    input: waveInput(29, 100, [12, 10, 11, 14, 10, 13, 12]),
    fires: { gibberish_email: 20 },
  },
  {
    name: 'generated mailboxes at 3 times the expected count',
    input: waveInput(30, 100, [12, 10, 11, 14, 10, 13, 12]),
    fires: { gibberish_email: 20, gibberish_wave: 25 },
  },
  {
    name: 'a busier day is not a wave: the expected count grows with the events',
    input: waveInput(30, 300, [12, 10, 11, 14, 10, 13, 12]),
    fires: { gibberish_email: 20 },
  },
  {
    // A tenant six days old: only the day it had events sets the share (10 %).
    name: 'days without any event are not quiet days',
    input: waveInput(12, 100, [0, 0, 0, 0, 0, 0, 10], [0, 0, 0, 0, 0, 0, 100]),
    fires: { gibberish_email: 20 },
  },
  {
    name: 'a wave does not count a mailbox that does not look generated',
    input: waveInput(9, 100, [0, 0, 0, 0, 0, 0, 0], undefined, false),
    fires: {},
  },
  { name: 'ip velocity below tier', input: { history: { ipAccounts: 4 } }, fires: {} },
  { name: 'ip velocity medium at 5', input: { history: { ipAccounts: 5 } }, fires: { ip_velocity: 25 } },
  { name: 'ip velocity medium at 9', input: { history: { ipAccounts: 9 } }, fires: { ip_velocity: 25 } },
  { name: 'ip velocity high at 10', input: { history: { ipAccounts: 10 } }, fires: { ip_velocity: 40 } },
]

describe('engine reason codes', () => {
  it.each(ROWS)('$name', (row) => {
    const r = score(input(row.input))
    const fired = Object.fromEntries(r.checks.map((c) => [c.reason, c.weight]))
    expect(fired).toEqual(row.fires)
    expect(r.reasons).toEqual(r.checks.map((c) => c.reason))
    for (const c of r.checks) {
      expect(c.message.length).toBeGreaterThan(10)
      expect(c.evidence).toBeTypeOf('object')
      expect(c.check).toMatch(/^[a-z][A-Za-z]+$/)
    }
  })

  it('keeps every single integrity signal below the default block threshold', () => {
    for (const row of ROWS.filter((r) => r.input.device)) {
      expect(score(input(row.input)).score, row.name).toBeLessThan(70)
    }
  })
})

describe('score and verdict', () => {
  it('sums weights and clamps to 100', () => {
    const r = score(
      input({
        ip: { ...residential, isDatacenter: true, isTor: true },
        email: { ...email, isDisposable: true, mx: 'none' },
        device: { is_headless: true },
      }),
    )
    expect(r.checks.reduce((s, c) => s + c.weight, 0)).toBe(45 + 30 + 35 + 25 + 45)
    expect(r.score).toBe(100)
    expect(r.verdict).toBe('block')
  })

  it.each([
    [0, 'allow'],
    [39, 'allow'],
    [40, 'review'],
    [69, 'review'],
    [70, 'block'],
    [100, 'block'],
  ] as const)('score %i → %s at the default thresholds', (s, v) => {
    expect(verdictFor(s, { review: 40, block: 70 })).toBe(v)
  })

  it('applies tenant weights, thresholds and velocity tiers', () => {
    const config = effectiveConfig({
      weights: { datacenterIp: 10, ipVelocityMed: 7, ipVelocityHigh: 9 },
      thresholds: { review: 5, block: 50, ipVelocityMed: 2, ipVelocityHigh: 3 },
    })
    const dc = score(input({ config, ip: { ...residential, isDatacenter: true } }))
    expect(dc.checks[0]?.weight).toBe(10)
    expect(dc.verdict).toBe('review')
    expect(score(input({ config, history: { ipAccounts: 1 } })).checks).toEqual([])
    expect(score(input({ config, history: { ipAccounts: 2 } })).checks[0]).toMatchObject({
      weight: 7,
      key: 'ipVelocityMed',
    })
    expect(score(input({ config, history: { ipAccounts: 3 } })).checks[0]).toMatchObject({
      weight: 9,
      key: 'ipVelocityHigh',
    })
    // The wave's weight and count threshold are the tenant's too.
    const wave = effectiveConfig({ weights: { gibberishWave: 11 }, thresholds: { gibberishWave: 5 } })
    const generated = (recent: number) =>
      score(input({ config: wave, ...waveInput(recent, 50, [0, 0, 0, 0, 0, 0, 0], []) })).checks.find(
        (c) => c.reason === 'gibberish_wave',
      )
    expect(generated(4)).toBeUndefined()
    expect(generated(5)).toMatchObject({
      weight: 11,
      key: 'gibberishWave',
      evidence: { recent: 5, expected: 0, threshold: 5 },
    })
    const zero = effectiveConfig({ weights: { datacenterIp: 0 }, thresholds: {} })
    expect(score(input({ config: zero, ip: { ...residential, isDatacenter: true } })).score).toBe(0)
  })
})

describe('poissonTail', () => {
  it('is the upper tail of a Poisson count, without underflow for large means', () => {
    // P(X >= 3 | 1) = 1 - e^-1 (1 + 1 + 1/2)
    expect(poissonTail(1, 3)).toBeCloseTo(1 - Math.exp(-1) * 2.5, 12)
    expect(poissonTail(0, 1)).toBe(0)
    expect(poissonTail(0, 0)).toBe(1)
    expect(poissonTail(5, 4)).toBe(1)
    const far = poissonTail(1000, 1200)
    expect(far).toBeGreaterThan(0)
    expect(far).toBeLessThan(1e-8)
    expect(poissonTail(1000, 1100)).toBeGreaterThan(far)
  })
})

describe('tenant lists', () => {
  const risky = { ip: { ...residential, isDatacenter: true }, device: { is_headless: true } }

  it('block entry: score 100, block, blocklisted check first with weight 100, other checks still listed', () => {
    const r = score(input({ ...risky, lists: [{ list: 'block', type: 'email' }] }))
    expect(r.score).toBe(100)
    expect(r.verdict).toBe('block')
    expect(r.reasons).toEqual(['blocklisted_email', 'datacenter_ip', 'headless_browser'])
    expect(r.checks[0]).toMatchObject({ check: 'lists', weight: 100 })
  })

  it('block entry blocks even with tenant thresholds above 100-weight sums', () => {
    const config = effectiveConfig({ weights: {}, thresholds: { review: 100, block: 100 } })
    const r = score(input({ config, lists: [{ list: 'block', type: 'ip' }] }))
    expect(r.verdict).toBe('block')
  })

  it('allow entry: score 0, allow, only the allowlist check', () => {
    const r = score(input({ ...risky, lists: [{ list: 'allow', type: 'user' }] }))
    expect(r).toMatchObject({ score: 0, verdict: 'allow', reasons: ['allowlisted_user'] })
    expect(r.checks[0]?.weight).toBe(0)
  })

  it('block beats allow', () => {
    const r = score(
      input({
        lists: [
          { list: 'allow', type: 'user' },
          { list: 'block', type: 'device' },
        ],
      }),
    )
    expect(r.verdict).toBe('block')
    expect(r.reasons).toEqual(['blocklisted_device'])
  })

  it.each(['ip', 'email', 'device', 'user'] as const)('names the matched type: %s', (type) => {
    expect(score(input({ lists: [{ list: 'block', type }] })).reasons).toEqual([`blocklisted_${type}`])
    expect(score(input({ lists: [{ list: 'allow', type }] })).reasons).toEqual([`allowlisted_${type}`])
  })
})

describe('templated explanation', () => {
  it('puts the verdict first and the strongest reasons in weight order', () => {
    const r = score(
      input({
        email: { ...email, hasPlusTag: true, isDisposable: true },
        ip: { ...residential, isDatacenter: true, datacenterProvider: 'Hetzner Online' },
      }),
    )
    // 90 passes the default block threshold (70): exactly one opening is right.
    expect(r.score).toBe(90)
    expect(r.verdict).toBe('block')
    const text = templateExplanation(r)
    expect(text.startsWith('Blocked with a risk score of 90.')).toBe(true)
    const dc = text.indexOf('hosting provider')
    const disp = text.indexOf('disposable')
    const plus = text.indexOf('+tag')
    expect(dc).toBeGreaterThan(0)
    expect(dc).toBeLessThan(disp)
    expect(disp).toBeLessThan(plus)
    expect(text).toMatch(/\.$/)
  })

  it('says so when nothing fired, and explains allowlist and blocklist decisions', () => {
    expect(templateExplanation(score(input()))).toBe('Allowed with a risk score of 0. No risk signals fired.')
    expect(templateExplanation(score(input({ lists: [{ list: 'allow', type: 'ip' }] })))).toContain(
      'allowlist',
    )
    expect(templateExplanation(score(input({ lists: [{ list: 'block', type: 'user' }] })))).toContain(
      'blocklist',
    )
  })

  it('mentions how many weaker signals were left out', () => {
    const r = score(
      input({
        device: {
          is_headless: true,
          is_tampered: true,
          is_os_mismatch: true,
          is_rooted: true,
          is_auto_time_off: true,
        },
      }),
    )
    expect(templateExplanation(r)).toContain('2 weaker signals also contributed.')
  })
})
