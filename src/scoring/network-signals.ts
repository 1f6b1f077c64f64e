import { DEFAULT_WEIGHTS, type Weights } from './tenant-config.js'

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

/** What the operator network knows about one entity, as the identifier checks report it. */
export interface Reputation {
  recent_abuse: boolean
  /** 0-1: how strongly the network implicates the entity. */
  network_risk: number
  /** Distinct tenants that flagged the entity. */
  network_operators: number
  /** Abuse-trap hits of an IP. */
  honeypot_hits: number
}

export const EMPTY_REPUTATION: Reputation = {
  recent_abuse: false,
  network_risk: 0,
  network_operators: 0,
  honeypot_hits: 0,
}

/**
 * Weight of `seen_in_fraud_network` by distinct flagging operators, from the tenant's weights
 * (defaults 1 → 20, 2 → 30, 3 or more → 40).
 */
export function networkWeight(
  operators: number,
  w: Pick<Weights, 'fraudNetworkOne' | 'fraudNetworkTwo' | 'fraudNetworkMore'> = DEFAULT_WEIGHTS,
): number {
  if (operators <= 0) return 0
  if (operators === 1) return w.fraudNetworkOne
  if (operators === 2) return w.fraudNetworkTwo
  return w.fraudNetworkMore
}
