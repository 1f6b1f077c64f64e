import type { EntityKind } from '../util/secrets.js'
import type { Db, Param, Sql } from './db.js'

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
export interface NetworkEntity {
  kind: EntityKind
  valueHash: string
}

export class NetworkStore {
  constructor(private readonly db: Db) {}

  async addFlags(
    sql: Sql,
    tenantId: string,
    entities: readonly NetworkEntity[],
    label: string,
    eventId: string,
    nowMs: number,
  ) {
    for (const e of entities) {
      await sql.run(
        'INSERT INTO network_flags (entity_kind, value_hash, tenant_id, label, event_id, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
        [e.kind, e.valueHash, tenantId, label, eventId, nowMs],
      )
    }
  }

  /** Withdraws this tenant's own flags for the entities; other tenants' flags stay. */
  async withdrawFlags(sql: Sql, tenantId: string, entities: readonly NetworkEntity[]): Promise<number> {
    let n = 0
    for (const e of entities) {
      n += await sql.run(
        'DELETE FROM network_flags WHERE tenant_id = ? AND entity_kind = ? AND value_hash = ?',
        [tenantId, e.kind, e.valueHash],
      )
    }
    return n
  }

  /** Distinct flagging operators over all the entities together, and per entity kind. */
  async flaggedBy(
    entities: readonly NetworkEntity[],
    nowMs: number,
  ): Promise<{ operators: number; kinds: Record<string, number> }> {
    if (entities.length === 0) return { operators: 0, kinds: {} }
    const cond = entities.map(() => '(entity_kind = ? AND value_hash = ?)').join(' OR ')
    const params: Param[] = entities.flatMap((e) => [e.kind, e.valueHash])
    const rows = await this.db.all<{ entity_kind: string; tenant_id: string }>(
      `SELECT DISTINCT entity_kind, tenant_id FROM network_flags WHERE created_ms >= ? AND (${cond})`,
      [nowMs - NETWORK_WINDOW_MS, ...params],
    )
    const kinds: Record<string, number> = {}
    for (const r of rows) kinds[r.entity_kind] = (kinds[r.entity_kind] ?? 0) + 1
    return { operators: new Set(rows.map((r) => r.tenant_id)).size, kinds }
  }

  async addTrapHit(
    ipHash: string,
    ipPrefix: string,
    path: string,
    source: 'http' | 'import',
    atMs: number,
    sql: Sql = this.db,
  ) {
    await sql.run(
      'INSERT INTO trap_hits (ip_hash, ip_prefix, path, source, created_ms) VALUES (?, ?, ?, ?, ?)',
      [ipHash, ipPrefix, path, source, atMs],
    )
  }

  async trapHits(ipHash: string, nowMs: number): Promise<number> {
    const r = await this.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM trap_hits WHERE ip_hash = ? AND created_ms >= ?',
      [ipHash, nowMs - TRAP_WINDOW_MS],
    )
    return Number(r?.n ?? 0)
  }

  /**
   * Per-ASN fraud rate across the whole deployment over a rolling window: events that were blocked or
   * confirmed as fraud by a label, over all events of the ASN.
   */
  async asnRates(sinceMs: number): Promise<{ asn: number; events: number; bad: number }[]> {
    const rows = await this.db.all<{ asn: number; events: number; bad: number }>(
      `SELECT e.asn AS asn, COUNT(*) AS events,
              SUM(CASE WHEN e.verdict = 'block' OR EXISTS (
                    SELECT 1 FROM labels l WHERE l.event_id = e.id AND l.label IN ('fraud', 'chargeback')) THEN 1 ELSE 0 END) AS bad
         FROM events e WHERE e.created_ms >= ? AND e.asn IS NOT NULL GROUP BY e.asn`,
      [sinceMs],
    )
    return rows.map((r) => ({ asn: Number(r.asn), events: Number(r.events), bad: Number(r.bad) }))
  }

  async reputation(kind: EntityKind, valueHash: string, nowMs: number): Promise<Reputation> {
    const [flags, honeypot] = await Promise.all([
      this.flaggedBy([{ kind, valueHash }], nowMs),
      kind === 'ip' ? this.trapHits(valueHash, nowMs) : Promise.resolve(0),
    ])
    return {
      recent_abuse: flags.operators > 0 || honeypot > 0,
      network_risk: networkWeight(flags.operators) / 40,
      network_operators: flags.operators,
      honeypot_hits: honeypot,
    }
  }
}
