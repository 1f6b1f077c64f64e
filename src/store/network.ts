import type { EntityKind } from '../util/secrets.js'
import type { Db } from './db.js'

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

/** How far back the network looks. */
export const NETWORK_WINDOW_MS = 90 * 24 * 3600_000
export const TRAP_WINDOW_MS = 30 * 24 * 3600_000

/** Weight of `seen_in_fraud_network` by distinct flagging operators: 1 → 20, 2 → 30, 3 or more → 40. */
export function networkWeight(operators: number): number {
  if (operators <= 0) return 0
  if (operators === 1) return 20
  if (operators === 2) return 30
  return 40
}

export const EMPTY_REPUTATION: Reputation = {
  recent_abuse: false,
  network_risk: 0,
  network_operators: 0,
  honeypot_hits: 0,
}

/**
 * The deployment-wide store of fraud flags (from opted-in tenants' labels) and abuse-trap hits. It is
 * keyed by entity hashes, which are identical across tenants, and never names a tenant to a reader.
 */
export class NetworkStore {
  constructor(private readonly db: Db) {}

  async reputation(kind: EntityKind, valueHash: string, nowMs: number): Promise<Reputation> {
    const flags = await this.db.get<{ operators: number }>(
      'SELECT COUNT(DISTINCT tenant_id) AS operators FROM network_flags WHERE entity_kind = ? AND value_hash = ? AND created_ms >= ?',
      [kind, valueHash, nowMs - NETWORK_WINDOW_MS],
    )
    const operators = Number(flags?.operators ?? 0)
    let honeypot = 0
    if (kind === 'ip') {
      const hits = await this.db.get<{ n: number }>(
        'SELECT COUNT(*) AS n FROM trap_hits WHERE ip_hash = ? AND created_ms >= ?',
        [valueHash, nowMs - TRAP_WINDOW_MS],
      )
      honeypot = Number(hits?.n ?? 0)
    }
    return {
      recent_abuse: operators > 0 || honeypot > 0,
      network_risk: networkWeight(operators) / 40,
      network_operators: operators,
      honeypot_hits: honeypot,
    }
  }
}
