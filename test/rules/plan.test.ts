import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { score } from '../../src/scoring/engine.js'
import { evidenceValue } from '../../src/scoring/rules/plan.js'
import type { RuleSpec } from '../../src/scoring/rules/types.js'
import { ruleVariables, VARIABLE_CLASSES, VARIABLE_TYPES } from '../../src/scoring/rules/variables.js'
import { DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS } from '../../src/scoring/tenant-config.js'
import type { EngineInput } from '../../src/scoring/types.js'
import { compileRules } from '../../src/services/rules/compile.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261126)

const NAMES = ['signup', 'login', 'checkout', 'withdrawal', '']

/** An event of any kind, its attributes of any type (or absent), so conditions meet errors too. */
/** Numbers meet the literals of the conditions below exactly, so boundaries are tried. */
const NUMBERS = [-1, 0, 1, 5, 8, 12, 700, 1500]
const attributeValue = fc.oneof(
  fc.constantFrom(...NUMBERS),
  fc.constantFrom(699.5, 700.5, 0.5, 1e20),
  fc.constantFrom('US', 'DE', 'crypto', 'card', 'trial', '700'),
  fc.boolean(),
  fc.array(fc.constantFrom('gift_card', 'book', 'US'), { maxLength: 3 }),
)
const inputArb = fc.record({
  name: fc.constantFrom(...NAMES),
  attributes: fc.dictionary(
    fc.constantFrom('amount', 'country', 'method', 'first_order', 'items'),
    attributeValue,
    {
      maxKeys: 5,
    },
  ),
  ip: fc.option(
    fc.record({
      asn: fc.option(fc.constantFrom(3320, 16509), { nil: null }),
      geoCountry: fc.option(fc.constantFrom('US', 'DE'), { nil: null }),
      isDatacenter: fc.boolean(),
      isVpn: fc.boolean(),
      isTor: fc.boolean(),
    }),
    { nil: null },
  ),
  eventCountry: fc.option(fc.constantFrom('US', 'DE'), { nil: null }),
  headless: fc.boolean(),
  accounts: fc.integer({ min: 1, max: 12 }),
  ipAccounts: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
  counts: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
  lists: fc.subarray([
    { list: 'vip', type: 'user' as const },
    { list: 'watch', type: 'ip' as const },
    { list: 'mules', type: 'email' as const },
  ]),
  subject: fc.option(fc.constantFrom('s-1', 's-2', 's-3'), { nil: null }),
})

function engineInput(x: typeof inputArb extends fc.Arbitrary<infer T> ? T : never, rules: RuleSpec[]) {
  const n = x.counts
  const input: EngineInput = {
    config: {
      weights: { ...DEFAULT_WEIGHTS },
      thresholds: { ...DEFAULT_THRESHOLDS },
      rules: compileRules(rules),
    },
    lists: x.lists,
    eventCountry: x.eventCountry,
    ipCountry: null,
    ip: x.ip && {
      ...x.ip,
      org: null,
      datacenterProvider: null,
      vpnProvider: null,
      isProxy: false,
      isPrivacyRelay: false,
    },
    email: null,
    device: x.headless ? { is_headless: true } : null,
    timezone: null,
    history: {
      ipAccounts: x.ipAccounts,
      device: {
        rung: 2,
        accounts: x.accounts,
        accountsSameNetwork: 1,
        recentEvents: 1,
        current: { ms: 0, ipHash: null, connection: null },
        timeline: [],
      },
      ...(n === undefined
        ? {}
        : {
            attributes: {
              card_fp: {
                accounts_10m: n,
                accounts_1h: n,
                accounts_24h: n,
                events_10m: n,
                events_1h: n,
                events_24h: n,
              },
            },
          }),
    },
    facts: {
      event: {
        name: x.name,
        attributes: x.attributes,
        source: null,
        site: null,
        campaign: null,
        affiliate: null,
      },
      email: null,
      phone: null,
      subject: x.subject,
    },
  }
  return input
}

/** Conditions of every shape the event-name index and the guards read, and of shapes they must leave alone. */
const name = fc.constantFrom(...NAMES.slice(0, 4))
const num = fc.oneof(fc.constantFrom(...NUMBERS), fc.constantFrom('699.5', '700.0', '1.0', '0.0', '12.0'))
const path = fc.constantFrom(
  'event.attributes.amount',
  'event.attributes.country',
  'event.attributes.first_order',
  'score',
  'velocity.ip_accounts',
  'device.accounts',
  'counts.card_fp.accounts_24h',
  'ip.asn',
)
const atom = fc.oneof(
  name.map((n) => `event.name == '${n}'`),
  name.map((n) => `'${n}' == event.name`),
  name.map((n) => `event.name != '${n}'`),
  fc
    .uniqueArray(name, { minLength: 1, maxLength: 3 })
    .map((ns) => `event.name in [${ns.map((n) => `'${n}'`).join(', ')}]`),
  fc.constantFrom(
    'ip.vpn',
    '!ip.vpn',
    'ip.datacenter',
    '!ip.tor',
    'device.headless',
    'ip.present',
    'event.attributes.first_order',
    '!event.attributes.first_order',
  ),
  fc.constantFrom(
    'has(counts.card_fp)',
    'has(event.attributes.amount)',
    'has(event.attributes.items)',
    'has(ip.asn)',
  ),
  fc.constantFrom(
    "'datacenter_ip' in reasons",
    "'vip' in lists.user",
    "'watch' in lists.ip",
    "'gift_card' in event.attributes.items",
    "'card_fp' in counts",
    "'US' in event.attributes.items",
  ),
  fc
    .tuple(path, fc.constantFrom('<', '<=', '>', '>=', '==', '!='), num, fc.boolean())
    .map(([p, op, n, flip]) => (flip ? `${n} ${op} ${p}` : `${p} ${op} ${n}`)),
  fc
    .tuple(
      fc.constantFrom('event.attributes.country', 'event.attributes.method', 'ip.country', 'event.country'),
      fc.constantFrom('US', 'DE', 'crypto', '700'),
    )
    .map(([p, v]) => `${p} == '${v}'`),
  fc.constantFrom(
    "event.attributes.country in ['US', 'DE']",
    "ip.country in ['US']",
    "event.attributes.amount in ['700']",
  ),
)
const nested: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}) && (${b})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}) || (${b})`),
    tie('expr').map((a) => `!(${a})`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, a, b]) => `(${c}) ? (${a}) : (${b})`),
  ),
})).expr as fc.Arbitrary<string>
/** Conjunctions of atoms (what guards are made of) and nested conditions (what they must leave alone). */
const condition = fc.oneof(
  fc.array(atom, { minLength: 1, maxLength: 3 }).map((as) => as.join(' && ')),
  nested,
)

/** A rule set whose conditions all compile (a combination CEL's type check refuses is left out). */
const ruleSet = fc
  .array(fc.tuple(condition, fc.constantFrom('enforce', 'shadow', 'off') as fc.Arbitrary<RuleSpec['mode']>), {
    minLength: 1,
    maxLength: 12,
  })
  .map((rs) =>
    rs
      .map(([when, mode], i): RuleSpec => ({ id: `r${i}`, when, then: { score: 1 }, mode, rollout: 100 }))
      .filter((r) => {
        try {
          compileRules([r])
          return true
        } catch {
          return false
        }
      }),
  )

describe('the event-name index and the guards', () => {
  it('never change which rules fire, nor the evidence (random rule sets and events)', () => {
    let held = 0
    let checked = 0
    fc.assert(
      fc.property(ruleSet, fc.array(inputArb, { minLength: 1, maxLength: 10 }), (rules, events) => {
        for (const x of events) {
          const input = engineInput(x, rules)
          const result = score(input)
          // The reference: every rule evaluated on every variable, no index, no guards.
          const builtIn = score({ ...input, config: { ...input.config, rules: [] } })
          const vars = ruleVariables(input, { reasons: builtIn.reasons, score: builtIn.score })
          const compiled = input.config.rules ?? []
          const expected = compiled.filter((r) => r.spec.mode !== 'off' && r.test(vars))
          const enforced = expected.filter((r) => r.spec.mode === 'enforce')
          expect(result.reasons.filter((c) => c.startsWith('rule:'))).toEqual(
            enforced.map((r) => `rule:${r.spec.id}`),
          )
          expect(result.shadow ?? []).toEqual(
            expected.filter((r) => r.spec.mode === 'shadow').map((r) => r.spec.id),
          )
          for (const r of enforced) {
            const check = result.checks.find((c) => c.key === r.spec.id)!
            expect(check.evidence).toEqual(
              Object.fromEntries(r.reads.map((p) => [p, evidenceValue(vars, p.split('.'))])),
            )
          }
          held += expected.length
          checked += compiled.filter((r) => r.spec.mode !== 'off').length
        }
      }),
      { seed: SEED, numRuns: 400 },
    )
    // The sample has rules that hold and rules that do not.
    expect(held).toBeGreaterThan(200)
    expect(checked - held).toBeGreaterThan(200)
  })

  it('finds the event names a condition can hold for, and nothing it cannot be sure of', () => {
    const names = (when: string) =>
      compileRules([{ id: 'r', when, then: { score: 1 }, mode: 'enforce', rollout: 100 }])[0]!.eventNames
    const table: [string, string[] | null][] = [
      ["event.name == 'checkout'", ['checkout']],
      ["'checkout' == event.name && ip.vpn", ['checkout']],
      ["event['name'] == 'checkout'", ['checkout']],
      ["event.name in ['signup', 'login'] && score > 5", ['login', 'signup']],
      ["event.name == 'a' || event.name in ['b', 'c']", ['a', 'b', 'c']],
      ["(event.name == 'a' || event.name == 'b') && event.name in ['b', 'c']", ['b']],
      ["event.name == 'a' && event.name == 'b'", []],
      ["ip.vpn ? event.name == 'a' : event.name == 'b'", ['a', 'b']],
      ["event.name != 'checkout'", null],
      ["!(event.name == 'checkout')", null],
      ["event.name == 'checkout' || ip.vpn", null],
      ["event.name in ['checkout', ip.vpn ? 'a' : 'b']", null],
      ["reasons.exists(r, event.name == 'checkout')", null],
      ['ip.vpn', null],
    ]
    for (const [when, expected] of table) expect(names(when), when).toEqual(expected)
  })

  it('declares a class for every group of variables and a maker for every declared field', () => {
    const vars = ruleVariables(engineInput(fc.sample(inputArb, { seed: SEED, numRuns: 1 })[0]!, []), {
      reasons: [],
      score: 0,
    })
    for (const [name, type] of Object.entries(VARIABLE_TYPES)) {
      expect(Object.hasOwn(vars, name), name).toBe(true)
      if (typeof type === 'string') continue
      expect(vars[name]).toBeInstanceOf(VARIABLE_CLASSES[name as keyof typeof VARIABLE_CLASSES])
      expect(Object.keys(vars[name] as object).sort(), name).toEqual(Object.keys(type).sort())
    }
  })
})
