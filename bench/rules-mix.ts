/**
 * The rule sets and events of `npm run bench:rules` (bench/rules.ts).
 *
 * `realistic` (the default) is a fraud team's rule book as the worked examples of docs/rules.md write
 * them: most rules are about one kind of event and say so first (`event.name == 'checkout' && …`),
 * some name several (`event.name in [...]`), a fifth look at any event (reasons, the score, lists,
 * device integrity); a hashed card fingerprint is compared with cards written in rules and looked up
 * in a list of stolen cards, and it and a referral code are counted. Events carry the attributes their kind has: a checkout its amount, card and
 * shipping, a signup its plan and referral code, a login its method. Thresholds are set so that most
 * rules hold on well under 1 % of their events and a few broad score rules on several percent, about
 * one rule holding per event in all.
 *
 * `dense` is the first version of this bench: ten shapes repeated, none naming an event, every event
 * carrying every attribute, 6.6 rules holding per event. It bounds the cost from above: every rule is
 * evaluated on every event and many fire.
 */
import type { AttributeSpecs, RuleSpec } from '../src/scoring/rules/types.js'
import { scoreBodies } from './score-mix.js'

export type RuleMix = 'realistic' | 'dense'

/** The cards on the `stolen_cards` list of both tenants (one checkout's card in 97). */
export const STOLEN_CARDS = Array.from({ length: 100 }, (_, k) => `card-${(k + 1) * 97}`)

export const BENCH_ATTRIBUTES: AttributeSpecs = {
  card_fp: { hashed: true, counted: true },
  referral_code: { counted: true },
}

const enforce = (i: number, when: string): RuleSpec => ({
  id: `rule_${i}`,
  when,
  then: i % 7 === 0 ? { verdict: 'review' } : { score: (i % 5) * 5 - 10 },
  mode: 'enforce',
  rollout: 100,
})

/** Shapes of rules, by what they are about; each called with a small number varying its thresholds. */
const CHECKOUT = [
  // Cards the team knows: a list of stolen cards, and a few written into the rule (both hashed).
  (n: number) =>
    `event.name == 'checkout' && 'stolen_cards' in lists.attributes.card_fp && event.attributes.amount > ${n * 100}`,
  (n: number) =>
    `event.name == 'checkout' && event.attributes.card_fp in ['card-${13 + n}', 'card-${1013 + n}', 'card-${2013 + n}']`,
  (n: number) =>
    `event.name == 'checkout' && event.attributes.amount > ${1200 + n * 20} && event.attributes.first_order`,
  (n: number) =>
    `event.name == 'checkout' && has(event.attributes.card_country) && ip.country != null && event.attributes.card_country != ip.country && event.attributes.amount > ${1450 + n * 10}`,
  (n: number) =>
    `event.name == 'checkout' && 'gift_card' in event.attributes.items && (ip.vpn || ip.proxy || ip.datacenter) && event.attributes.amount > ${100 + n * 10}`,
  (n: number) =>
    `event.name == 'checkout' && has(counts.card_fp) && counts.card_fp.accounts_24h >= ${4 + (n % 4)}`,
  (n: number) => `event.name == 'checkout' && has(counts.card_fp) && counts.card_fp.events_1h >= ${4 + n}`,
  (n: number) =>
    `event.name == 'checkout' && event.attributes.shipping_country != event.country && event.attributes.first_order && event.attributes.amount > ${1000 + n * 20}`,
  (n: number) =>
    `event.name == 'checkout' && device.recent_events <= 1 && 'timezone_mismatch' in reasons && event.attributes.amount > ${1450 + n * 10}`,
  (n: number) =>
    `event.name == 'checkout' && event.attributes.payment_method == 'crypto' && event.attributes.amount > ${1000 + n * 50} && score >= 80`,
  (n: number) =>
    `event.name == 'checkout' && event.attributes.currency != 'USD' && ip.country == 'US' && event.attributes.amount > ${1400 + n * 20}`,
  (n: number) =>
    `event.name == 'checkout' && email.disposable && event.attributes.first_order && event.attributes.amount > ${500 + n * 50}`,
]
const SIGNUP = [
  (n: number) =>
    `event.name == 'signup' && email.disposable && ${n % 2 === 0 ? 'phone.voip' : 'email.gibberish'}`,
  (n: number) =>
    `event.name == 'signup' && event.campaign == 'promo_${n}' && (email.disposable || phone.voip)`,
  (n: number) =>
    `event.name == 'signup' && has(counts.referral_code) && counts.referral_code.accounts_1h >= ${3 + n}`,
  (n: number) => `event.name == 'signup' && device.accounts >= ${12 + n * 4} && !ip.relay`,
  (n: number) => `event.name == 'signup' && email.gibberish && device.accounts >= ${5 + n} && score >= 80`,
  (n: number) =>
    `event.name == 'signup' && event.attributes.plan == 'trial' && (ip.tor || 'datacenter_ip' in reasons) && velocity.ip_accounts >= ${5 + n}`,
]
const LOGIN = [
  (n: number) => `event.name == 'login' && velocity.ip_accounts >= ${8 + n} && 'headless_browser' in reasons`,
  (n: number) =>
    `event.name == 'login' && device.headless && event.attributes.method == 'password' && device.recent_events >= ${n}`,
  (n: number) => `event.name == 'login' && ip.tor && score >= ${20 + n * 5}`,
  (n: number) => `event.name == 'login' && 'account_takeover' in reasons && device.recent_events > ${n}`,
]
const SEVERAL = [
  (n: number) =>
    `event.name in ['checkout', 'withdrawal'] && device.headless && (device.tampered || device.antidetect_score > ${40 + n * 5})`,
  (n: number) => `event.name in ['signup', 'login'] && 'datacenter_ip' in reasons && score >= ${95 + n}`,
  (n: number) =>
    `(event.name == 'checkout' || event.name == 'payout') && device.antidetect_score > ${70 + n}`,
]
const ANY = [
  (n: number) => `'datacenter_ip' in reasons && 'headless_browser' in reasons && score >= ${70 + n * 2}`,
  (n: number) => `'vip_${n}' in lists.user && score < 50`,
  (n: number) => `device.tampered && device.antidetect_score > ${50 + n * 5}`,
  (n: number) =>
    `event.country != null && ip.country != null && event.country != ip.country && email.disposable && email.gibberish && score > ${90 + n}`,
  (n: number) => `'block' in lists.email || ('watch_${n}' in lists.ip && score >= 40)`,
]

/** How many rules of each kind the realistic book has (100 in all). */
const BOOK: [((n: number) => string)[], number][] = [
  [CHECKOUT, 40],
  [SIGNUP, 20],
  [LOGIN, 12],
  [SEVERAL, 9],
  [ANY, 19],
]

export function realisticRules(): RuleSpec[] {
  const out: RuleSpec[] = []
  for (const [shapes, count] of BOOK)
    for (let k = 0; k < count; k++)
      out.push(enforce(out.length, shapes[k % shapes.length]!(Math.floor(k / shapes.length))))
  return out
}

/** The first mix: ten shapes over attributes, signals, reasons, lists and counts, no event named. */
export function denseRules(): RuleSpec[] {
  const shapes = [
    (n: number) => `event.name == 'checkout' && event.attributes.amount > ${1440 + n}`,
    (n: number) => `has(event.attributes.plan) && event.attributes.plan == 'enterprise_${n}'`,
    (n: number) => `'gift_card' in event.attributes.items && score >= ${60 + (n % 30)}`,
    (n: number) => `ip.datacenter && event.attributes.amount > ${1000 + n * 3}`,
    (n: number) => `'datacenter_ip' in reasons && velocity.ip_accounts >= ${8 + (n % 5)}`,
    (n: number) => `has(counts.card_fp) && counts.card_fp.accounts_24h >= ${12 + (n % 4)}`,
    (n: number) => `email.disposable && !phone.present && device.accounts >= ${3 + (n % 3)}`,
    (n: number) => `'vip_${n % 3}' in lists.user && event.country != null && event.country != ip.country`,
    (n: number) => `event.attributes.card_country != ip.country && score > ${70 + (n % 20)}`,
    (n: number) => `device.headless && device.tampered && device.antidetect_score > ${50 + (n % 40)}`,
  ]
  return Array.from({ length: 100 }, (_, i) => ({
    id: `rule_${i}`,
    when: shapes[i % shapes.length]!(i),
    then: { score: (i % 5) - 2 },
    mode: 'enforce' as const,
    rollout: 100,
  }))
}

export const mixRules = (mix: RuleMix): RuleSpec[] => (mix === 'dense' ? denseRules() : realisticRules())

/** Attributes as each kind of event carries them (realistic), or every attribute on every event (dense). */
export function mixBodies(count: number, mix: RuleMix): Record<string, unknown>[] {
  return scoreBodies(count).map((b, i) => {
    if (mix === 'dense')
      return {
        ...b,
        attributes: {
          amount: (i * 37) % 1500,
          plan: `plan_${i % 9}`,
          card_fp: `card-${i % 300}`,
          card_country: ['US', 'DE', 'GB'][i % 3]!,
          items: i % 4 === 0 ? ['gift_card'] : ['book'],
        },
      }
    const attributes: Record<string, unknown> =
      b['event'] === 'checkout'
        ? {
            amount: ((i * 37) % 1500) + (i % 2 === 0 ? 0.5 : 0),
            currency: ['USD', 'EUR', 'GBP'][i % 3]!,
            // Most cards are used once; one checkout in twenty pays with one of a few shared cards.
            card_fp: i % 20 === 0 ? `card-shared-${i % 53}` : `card-${i}`,
            card_bin: `4${String(10000 + (i % 50)).padStart(5, '0')}`,
            card_country: ['US', 'DE', 'GB', 'BR'][i % 4]!,
            shipping_country: ['US', 'DE', 'GB'][(i >> 1) % 3]!,
            items: i % 5 === 0 ? ['gift_card', 'phone'] : ['book'],
            first_order: i % 6 === 0,
            payment_method: ['card', 'card', 'card', 'paypal', 'crypto'][i % 5]!,
          }
        : b['event'] === 'signup'
          ? {
              plan: ['free', 'pro', 'trial'][i % 3]!,
              referral_code: i % 10 === 0 ? `ref-shared-${i % 31}` : `ref-${i}`,
            }
          : { method: ['password', 'sso', 'magic_link'][i % 3]! }
    const campaign = b['event'] === 'signup' && i % 10 === 0 ? { campaign: `promo_${i % 4}` } : {}
    return { ...b, ...campaign, attributes }
  })
}
