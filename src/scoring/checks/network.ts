import { networkWeight } from '../network-signals.js'
import type { Check, CheckFamily } from '../types.js'
import { fire } from './fire.js'

export const networkRisk: CheckFamily = (input) => {
  const n = input.network
  if (!n) return []
  const out: Check[] = []
  if (n.trapHits > 0) {
    out.push(
      fire('abuse_ip', {
        key: 'abuseIp',
        weight: input.config.weights.abuseIp,
        message: 'The IP address was caught probing abuse traps (a known scanner or bot).',
        evidence: { trap_hits: n.trapHits, window_days: 30 },
      }),
    )
  }
  if (n.asn && n.asn.rate >= n.asn.threshold) {
    out.push(
      fire('abusive_asn', {
        key: 'abusiveAsn',
        weight: input.config.weights.abusiveAsn,
        message: `The IP's network (AS${n.asn.asn}) has a high fraud rate across the operator network.`,
        evidence: {
          asn: n.asn.asn,
          fraud_rate: Math.round(n.asn.rate * 1000) / 1000,
          events: n.asn.events,
          threshold: n.asn.threshold,
        },
      }),
    )
  }
  if (n.flaggedOperators > 0) {
    const kinds = Object.keys(n.flaggedKinds).sort()
    out.push(
      fire('seen_in_fraud_network', {
        key: 'seenInFraudNetwork',
        weight: networkWeight(n.flaggedOperators, input.config.weights),
        message: `The event's ${kinds.join(' and ')} ${kinds.length === 1 ? 'was' : 'were'} flagged for fraud by ${n.flaggedOperators} operator${n.flaggedOperators === 1 ? '' : 's'} of the network.`,
        evidence: {
          operators: n.flaggedOperators,
          entity_kinds: kinds,
          ...Object.fromEntries(kinds.map((k) => [`${k}_operators`, n.flaggedKinds[k]!])),
        },
      }),
    )
  }
  return out
}
