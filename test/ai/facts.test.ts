import { describe, expect, it } from 'vitest'
import { bucketEvidence, cacheKey, factsToPrompt, toFacts } from '../../src/ai/facts.js'
import { describeReason, KNOWN_REASON_CODES } from '../../src/ai/reasons.js'
import { REASONS } from '../../src/scoring/reasons.js'
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

  it('describes every code of the reason registry with its description, and has a generic line for the rest', () => {
    expect(KNOWN_REASON_CODES).toEqual(REASONS.map((r) => r.code))
    const generic = describeReason('brand_new_rule')
    for (const r of REASONS) {
      expect(describeReason(r.code)).toBe(r.description)
      expect(r.description).not.toBe(generic)
    }
    expect(describeReason('constructor')).toBe(generic)
  })
})
