import { describe, expect, it } from 'vitest'
import { bucketEvidence, cacheKey, factsToPrompt, toFacts } from '../../src/ai/facts.js'
import { describeReason, KNOWN_REASON_CODES } from '../../src/ai/reasons.js'
import { check, explanationInput } from './support/inputs.js'

const key = (...args: Parameters<typeof explanationInput>) => cacheKey(toFacts(explanationInput(...args)))

describe('evidence buckets', () => {
  it.each([
    ['accounts', 1, '1'],
    ['accounts', 3, '2-4'],
    ['accounts', 7, '5-9'],
    ['accounts', 12, '10-19'],
    ['accounts', 250, '20+'],
    ['antidetect_score', 73, '70-79'],
    ['antidetect_score', 100, '90-100'],
    ['gibberish_score', 0.873, '0.8-0.9'],
    ['threshold', 10, '10'],
    ['window_minutes', 10, '10'],
    ['min_score', 50, '50'],
    ['headless', true, true],
  ])('%s=%s becomes %s', (k, v, out) => {
    expect(bucketEvidence(k, v)).toBe(out)
  })

  it.each([
    ['domain', 'example.com'],
    ['timezone_countries', ['AR', 'UY']],
    ['org', null],
    ['asn', 7922],
    ['user_id', 42],
    ['phone', 14155550123],
    ['Weird Key', 3],
    ['ratio', Number.NaN],
  ])('drops %s=%s', (k, v) => {
    expect(bucketEvidence(k, v)).toBeNull()
  })
})

describe('cache key', () => {
  it('ignores check order, messages, string evidence and differences inside one bucket', () => {
    const a = key({
      checks: [check('ip_velocity', 25, { accounts: 6, ip: '1.2.3.4' }, 'six'), check('vpn_ip', 30)],
      score: 55,
    })
    const b = key({
      checks: [check('vpn_ip', 30, { provider: 'Other' }), check('ip_velocity', 25, { accounts: 9 }, 'nine')],
      score: 58,
      fallback: 'different template',
    })
    expect(a).toBe(b)
  })

  it('changes with the verdict, a weight, a bucket, the score band or the thresholds', () => {
    const base = { checks: [check('ip_velocity', 25, { accounts: 6 })], score: 55 }
    const k = key(base)
    expect(key({ ...base, verdict: 'block' })).not.toBe(k)
    expect(key({ ...base, checks: [check('ip_velocity', 40, { accounts: 6 })] })).not.toBe(k)
    expect(key({ ...base, checks: [check('ip_velocity', 25, { accounts: 12 })] })).not.toBe(k)
    expect(key({ ...base, score: 61 })).not.toBe(k)
    expect(key({ ...base, thresholds: { review: 30, block: 70 } })).not.toBe(k)
  })
})

describe('prompt', () => {
  it('lists signals strongest first with our description and no message text', () => {
    const prompt = factsToPrompt(
      toFacts(
        explanationInput({
          checks: [check('plus_addressing', 10, {}, 'MSG-ONE'), check('datacenter_ip', 45, {}, 'MSG-TWO')],
        }),
      ),
    )
    expect(prompt.indexOf('datacenter_ip')).toBeLessThan(prompt.indexOf('plus_addressing'))
    expect(prompt).toContain(describeReason('datacenter_ip'))
    expect(prompt).not.toContain('MSG-')
  })

  it('describes every reason code of the spec and our own, and has a generic line for the rest', () => {
    const spec = [
      'datacenter_ip',
      'abuse_ip',
      'abusive_asn',
      'proxy_ip',
      'vpn_ip',
      'privacy_relay',
      'geo_mismatch',
      'headless_browser',
      'device_inconsistent',
      'emulated_environment',
      'noise_injected',
      'device_tampered',
      'context_mismatch',
      'engine_ua_mismatch',
      'os_mismatch',
      'timezone_mismatch',
      'known_spoof_signature',
      'forged_beacon',
      'device_reuse',
      'ip_velocity',
      'device_velocity',
      'vpn_drop',
      'ip_cloaking',
      'device_ip_hopping',
      'disposable_email',
      'email_no_mx',
      'gibberish_email',
      'plus_addressing',
      'seen_in_fraud_network',
      'blocklisted_ip',
      'blocklisted_email',
      'blocklisted_device',
      'blocklisted_user',
      'allowlisted_ip',
      'allowlisted_email',
      'allowlisted_device',
      'allowlisted_user',
    ]
    const ours = [
      'antidetect_browser',
      'app_tampered',
      'rooted_device',
      'sideloaded_app',
      'mock_location',
      'debug_environment',
      'vpn_active',
      'auto_time_off',
    ]
    expect([...KNOWN_REASON_CODES].sort()).toEqual([...spec, ...ours].sort())
    const generic = describeReason('brand_new_rule')
    for (const code of KNOWN_REASON_CODES) expect(describeReason(code)).not.toBe(generic)
  })
})
