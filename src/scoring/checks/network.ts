import { networkWeight } from '../../store/network.js'
import type { Check, CheckFamily } from '../types.js'

/** What the operator network knows about the event's entities (suppressed entities already removed). */
export interface NetworkSignals {
  /** Distinct operators that flagged any entity of the event. */
  flaggedOperators: number
  /** Flagging operators per entity kind (ip, email, device, user). */
  flaggedKinds: Record<string, number>
  /** Abuse-trap hits of the event's IP in the trap window. */
  trapHits: number
  /** Deployment-wide fraud rate of the IP's ASN, when it has enough traffic to be measured. */
  asn: { asn: number; events: number; bad: number; rate: number; threshold: number } | null
}

export const ABUSE_IP_WEIGHT = 40
export const ABUSIVE_ASN_WEIGHT = 35

export const networkRisk: CheckFamily = (input) => {
  const n = input.network
  if (!n) return []
  const out: Check[] = []
  if (n.trapHits > 0) {
    out.push({
      check: 'network',
      key: 'abuseIp',
      weight: ABUSE_IP_WEIGHT,
      reason: 'abuse_ip',
      message: 'The IP address was caught probing abuse traps (a known scanner or bot).',
      evidence: { trap_hits: n.trapHits, window_days: 30 },
    })
  }
  if (n.asn && n.asn.rate >= n.asn.threshold) {
    out.push({
      check: 'network',
      key: 'abusiveAsn',
      weight: ABUSIVE_ASN_WEIGHT,
      reason: 'abusive_asn',
      message: `The IP's network (AS${n.asn.asn}) has a high fraud rate across the operator network.`,
      evidence: {
        asn: n.asn.asn,
        fraud_rate: Math.round(n.asn.rate * 1000) / 1000,
        events: n.asn.events,
        threshold: n.asn.threshold,
      },
    })
  }
  if (n.flaggedOperators > 0) {
    const kinds = Object.keys(n.flaggedKinds).sort()
    out.push({
      check: 'network',
      key: 'seenInFraudNetwork',
      weight: networkWeight(n.flaggedOperators),
      reason: 'seen_in_fraud_network',
      message: `The event's ${kinds.join(' and ')} ${kinds.length === 1 ? 'was' : 'were'} flagged for fraud by ${n.flaggedOperators} operator${n.flaggedOperators === 1 ? '' : 's'} of the network.`,
      evidence: {
        operators: n.flaggedOperators,
        entity_kinds: kinds,
        ...Object.fromEntries(kinds.map((k) => [`${k}_operators`, n.flaggedKinds[k]!])),
      },
    })
  }
  return out
}
