import { describe, expect, it } from 'vitest'
import { score } from '../../src/scoring/engine.js'
import { inRollout } from '../../src/scoring/rules/apply.js'
import type { RuleSpec } from '../../src/scoring/rules/types.js'
import { DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS } from '../../src/scoring/tenant-config.js'
import type { EngineInput } from '../../src/scoring/types.js'
import { compileRules, RULE_LIMITS } from '../../src/services/rules/compile.js'

const rule = (when: string, over: Partial<RuleSpec> = {}): RuleSpec => ({
  id: 'r1',
  when,
  then: { score: 30 },
  mode: 'enforce',
  rollout: 100,
  ...over,
})

const problem = (specs: RuleSpec[]): string => {
  try {
    compileRules(specs)
  } catch (err) {
    return (err as Error).message
  }
  return 'compiled'
}

/** A quiet event: no signal fires, so only the rules under test can move it. */
const input = (over: Partial<EngineInput> = {}, rules: RuleSpec[] = []): EngineInput => ({
  config: {
    weights: { ...DEFAULT_WEIGHTS },
    thresholds: { ...DEFAULT_THRESHOLDS },
    rules: compileRules(rules),
  },
  lists: [],
  eventCountry: null,
  ipCountry: null,
  ip: null,
  email: null,
  device: null,
  timezone: null,
  history: { ipAccounts: null },
  facts: {
    event: {
      name: 'checkout',
      attributes: { amount: 700, currency: 'EUR', tags: ['a', 'b'] },
      source: null,
      site: null,
      campaign: null,
      affiliate: null,
    },
    email: null,
    phone: null,
    subject: 'subject-1',
  },
  ...over,
})

describe('compiling tenant rules', () => {
  it('names the rule, the position and the problem', () => {
    expect(problem([rule("event.name == 'x'"), rule('event.nmae == 1', { id: 'typo' })])).toMatch(
      /^rules\[1\] \(typo\): .*nmae.* at position \d+$/,
    )
    expect(problem([rule('event.name == ')])).toMatch(/^rules\[0\] \(r1\): syntax error: .* at position \d+$/)
    expect(problem([rule('nothing > 1')])).toMatch(/rules\[0\] \(r1\): .*Unknown variable: nothing/)
    expect(problem([rule('event.name > 1')])).toMatch(/rules\[0\] \(r1\): no such overload/)
    expect(problem([rule('event.name')])).toMatch(/when must be a condition \(bool\), not string/)
    expect(problem([rule('true'), rule('true')])).toMatch(/rules\[1\] \(r1\): id is used by another rule/)
    expect(problem([rule('true', { id: 'Bad-Id' })])).toMatch(/rules\[0\]: id must be/)
  })

  it('bounds what a rule may cost', () => {
    expect(
      problem([rule('reasons.exists(a, reasons.exists(b, reasons.exists(c, a == b && b == c)))')]),
    ).toMatch(/comprehensions nest 3 deep; at most 2/)
    expect(problem([rule('reasons.exists(a, reasons.exists(b, a == b))')])).toBe('compiled')
    expect(problem([rule(`event.name == '${'x'.repeat(RULE_LIMITS.expressionChars)}'`)])).toMatch(
      /longer than 2000/,
    )
    const many = Array.from({ length: 120 }, (_, i) => `event.name == 'n${i}'`).join(' || ')
    expect(problem([rule(many)])).not.toBe('compiled')
    const tooMany = Array.from({ length: RULE_LIMITS.rules + 1 }, (_, i) => rule('true', { id: `r${i}` }))
    expect(problem(tooMany)).toMatch(/at most 200 rules/)
  })
})

describe('the engine with tenant rules', () => {
  it('adds an enforced score rule as a custom check with the values it read as evidence', () => {
    const r = score(
      input({}, [rule("event.name == 'checkout' && event.attributes.amount > 500", { id: 'big_order' })]),
    )
    expect(r.score).toBe(30)
    expect(r.reasons).toEqual(['rule:big_order'])
    expect(r.checks[0]).toMatchObject({
      check: 'custom',
      key: 'big_order',
      weight: 30,
      evidence: { 'event.name': 'checkout', 'event.attributes.amount': 700 },
    })
  })

  it('does not fire when the condition reads a missing attribute', () => {
    expect(score(input({}, [rule('event.attributes.missing > 1')])).reasons).toEqual([])
    expect(
      score(input({}, [rule("has(event.attributes.missing) || event.attributes.currency == 'EUR'")])).score,
    ).toBe(30)
  })

  it('compares whole numbers as CEL ints and lists with in', () => {
    expect(
      score(input({}, [rule("event.attributes.amount == 700 && 'b' in event.attributes.tags")])).score,
    ).toBe(30)
    expect(score(input({}, [rule('event.attributes.amount == 701')])).score).toBe(0)
  })

  it('clamps the total to 0-100 and lets a negative score rule lower it', () => {
    expect(
      score(
        input({}, [rule('true', { then: { score: 100 } }), rule('true', { id: 'r2', then: { score: 50 } })]),
      ).score,
    ).toBe(100)
    const ip = {
      asn: 1,
      org: 'x',
      geoCountry: 'US',
      isDatacenter: true,
      datacenterProvider: 'x',
      isTor: false,
      isVpn: false,
      vpnProvider: null,
      isProxy: false,
      isPrivacyRelay: false,
    }
    const lowered = score(input({ ip }, [rule("'datacenter_ip' in reasons", { then: { score: -45 } })]))
    expect(lowered.reasons).toEqual(['datacenter_ip', 'rule:r1'])
    expect(lowered.score).toBe(0)
  })

  it('takes review and block as floors and allow as an override; a block list still wins', () => {
    expect(score(input({}, [rule('true', { then: { verdict: 'review' } })])).verdict).toBe('review')
    expect(
      score(
        input({}, [
          rule('true', { then: { verdict: 'block' } }),
          rule('true', { id: 'r2', then: { verdict: 'allow' } }),
        ]),
      ).verdict,
    ).toBe('block')
    const high = input({}, [
      rule('true', { then: { score: 90 } }),
      rule('true', { id: 'r2', then: { verdict: 'allow' } }),
    ])
    expect(score(high)).toMatchObject({ score: 90, verdict: 'allow' })
    const blocked = score(
      input({ lists: [{ list: 'block', type: 'user' }] }, [rule('true', { then: { verdict: 'allow' } })]),
    )
    expect(blocked).toMatchObject({ score: 100, verdict: 'block' })
    const allowed = score(
      input({ lists: [{ list: 'allow', type: 'user' }] }, [rule('true', { then: { verdict: 'block' } })]),
    )
    expect(allowed).toMatchObject({ score: 0, verdict: 'allow' })
  })

  it('records shadow rules without changing score, verdict, reasons or checks', () => {
    const plain = score(input())
    const shadowed = score(input({}, [rule('true', { mode: 'shadow', then: { verdict: 'block' } })]))
    expect(shadowed.shadow).toEqual(['r1'])
    const { shadow: _s, ...rest } = shadowed
    expect(rest).toEqual(plain)
    expect(score(input({}, [rule('true', { mode: 'off' })])).reasons).toEqual([])
  })

  it('rolls out deterministically per subject, within a binomial bound of the share', () => {
    const n = 4000
    let inside = 0
    for (let i = 0; i < n; i++) {
      const subject = `s-${i}`
      const a = inRollout('r1', subject, 25)
      expect(inRollout('r1', subject, 25)).toBe(a)
      // Widening the rollout never drops a subject that was in.
      if (a) expect(inRollout('r1', subject, 60)).toBe(true)
      if (a) inside++
    }
    // 25 % of 4000 is 1000 with a standard deviation of about 27: 5 sigma either side.
    expect(inside).toBeGreaterThan(1000 - 140)
    expect(inside).toBeLessThan(1000 + 140)
    expect(inRollout('r1', null, 99)).toBe(false)
    expect(inRollout('r1', null, 100)).toBe(true)
  })
})
