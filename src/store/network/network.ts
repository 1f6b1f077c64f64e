import { networkWeight, type Reputation } from '../../scoring/network-signals.js'
import type { EntityKind } from '../../util/entities.js'
import { type Db, q, type Work } from '../engine/db.js'
import { Cached, globalScoped, type Invalidation } from '../engine/invalidation.js'

/** How far back the network looks. */
export const NETWORK_WINDOW_MS = 90 * 24 * 3600_000
export const TRAP_WINDOW_MS = 30 * 24 * 3600_000

/**
 * The deployment-wide store of fraud flags (from opted-in tenants' labels) and abuse-trap hits. It is
 * keyed by entity hashes, which are identical across tenants, and never names a tenant to a reader.
 */
export interface NetworkEntity {
  kind: EntityKind
  valueHash: string
}

/** Per entity (`kind\0hash`): who flagged it and when. */
type FlagIndex = Map<string, { tenantId: string; createdMs: number }[]>
/** Per IP hash: the times of its stored trap hits. */
type TrapIndex = Map<string, number[]>

/** Stored trap hits: at most one per IP and path per hour, and at most this many per IP in the window. */
export const TRAP_DEDUP_MS = 3600_000
export const TRAP_IP_CAP = 100

const entityKey = (kind: string, hash: string) => `${kind}\u0000${hash}`

/** One request to an abuse trap: the caller's keyed IP hash and prefix, never the address. */
export interface TrapHit {
  ipHash: string
  ipPrefix: string
  path: string
  source: 'http' | 'import'
  atMs: number
}

export class NetworkStore {
  // Both are small (flags come from labels, trap hits are bounded per IP) and read on every score.
  private readonly flags: Cached<'all', FlagIndex>
  private readonly traps: Cached<'all', TrapIndex>

  constructor(
    private readonly db: Db,
    private readonly inv: Invalidation,
  ) {
    this.flags = new Cached<'all', FlagIndex>(inv, globalScoped('flags'))
    this.traps = new Cached<'all', TrapIndex>(inv, globalScoped('traps'))
  }

  /** One flag per entity: this tenant reported the labelled event's entities as `label`. */
  *addFlags(f: {
    tenantId: string
    entities: readonly NetworkEntity[]
    label: string
    eventId: string
    nowMs: number
  }): Work<void> {
    const { tenantId, entities, label, eventId, nowMs } = f
    for (const e of entities) {
      yield* q.run(
        'INSERT INTO network_flags (entity_kind, value_hash, tenant_id, label, event_id, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
        [e.kind, e.valueHash, tenantId, label, eventId, nowMs],
      )
    }
    if (entities.length) yield* this.inv.touch('flags')
  }

  /** Removes the flags this tenant's label on this event contributed; returns the entities they named. */
  *removeFlags(tenantId: string, eventId: string, label: string): Work<NetworkEntity[]> {
    const rows = yield* q.all<{ entity_kind: string; value_hash: string }>(
      'SELECT entity_kind, value_hash FROM network_flags WHERE tenant_id = ? AND event_id = ? AND label = ?',
      [tenantId, eventId, label],
    )
    if (rows.length === 0) return []
    yield* q.run('DELETE FROM network_flags WHERE tenant_id = ? AND event_id = ? AND label = ?', [
      tenantId,
      eventId,
      label,
    ])
    yield* this.inv.touch('flags')
    return rows.map((r) => ({ kind: r.entity_kind, valueHash: r.value_hash }) as NetworkEntity)
  }

  /** Whether the network holds any flag at all (a fresh deployment holds none). */
  async anyFlags(): Promise<boolean> {
    return (await this.flags.get('all', () => this.loadFlags())).size > 0
  }

  /** Distinct flagging operators over all the entities together, and per entity kind (from memory). */
  async flaggedBy(
    entities: readonly NetworkEntity[],
    nowMs: number,
  ): Promise<{ operators: number; kinds: Record<string, number> }> {
    if (entities.length === 0) return { operators: 0, kinds: {} }
    const index = await this.flags.get('all', () => this.loadFlags())
    const kinds: Record<string, number> = {}
    if (index.size === 0) return { operators: 0, kinds }
    const operators = new Set<string>()
    for (const e of entities) {
      const by = new Set<string>()
      for (const f of index.get(entityKey(e.kind, e.valueHash)) ?? []) {
        if (f.createdMs >= nowMs - NETWORK_WINDOW_MS) by.add(f.tenantId)
      }
      if (by.size) kinds[e.kind] = by.size
      for (const t of by) operators.add(t)
    }
    return { operators: operators.size, kinds }
  }

  private async loadFlags(): Promise<FlagIndex> {
    const rows = await this.db.all<{
      entity_kind: string
      value_hash: string
      tenant_id: string
      created_ms: number
    }>('SELECT entity_kind, value_hash, tenant_id, created_ms FROM network_flags')
    const index: FlagIndex = new Map()
    for (const r of rows) {
      const k = entityKey(r.entity_kind, r.value_hash)
      const list = index.get(k) ?? []
      list.push({ tenantId: r.tenant_id, createdMs: Number(r.created_ms) })
      index.set(k, list)
    }
    return index
  }

  /**
   * Stores a trap hit unless the same IP hit the same path within the hour either side, or the IP already
   * has TRAP_IP_CAP hits in the window: anonymous callers cannot grow the table without bound. Returns
   * whether it was stored.
   */
  *addTrapHit(hit: TrapHit): Work<boolean> {
    const { ipHash, ipPrefix, path, source, atMs } = hit
    const stored = yield* q.run(
      `INSERT INTO trap_hits (ip_hash, ip_prefix, path, source, created_ms)
       SELECT ?, ?, ?, ?, CAST(? AS BIGINT)
        WHERE NOT EXISTS (SELECT 1 FROM trap_hits WHERE ip_hash = ? AND path = ? AND created_ms > ? AND created_ms < ?)
          AND (SELECT COUNT(*) FROM trap_hits WHERE ip_hash = ? AND created_ms > ?) < ?`,
      [
        ipHash,
        ipPrefix,
        path,
        source,
        atMs,
        ipHash,
        path,
        atMs - TRAP_DEDUP_MS,
        atMs + TRAP_DEDUP_MS,
        ipHash,
        atMs - TRAP_WINDOW_MS,
        TRAP_IP_CAP,
      ],
    )
    if (stored) yield* this.inv.touch('traps')
    return stored > 0
  }

  /** Trap hits of an IP within the window (from memory). */
  async trapHits(ipHash: string, nowMs: number): Promise<number> {
    const index = await this.traps.get('all', () => this.loadTraps())
    let n = 0
    for (const t of index.get(ipHash) ?? []) if (t >= nowMs - TRAP_WINDOW_MS && t <= nowMs) n++
    return n
  }

  private async loadTraps(): Promise<TrapIndex> {
    const rows = await this.db.all<{ ip_hash: string; created_ms: number }>(
      'SELECT ip_hash, created_ms FROM trap_hits',
    )
    const index: TrapIndex = new Map()
    for (const r of rows) {
      const list = index.get(r.ip_hash) ?? []
      list.push(Number(r.created_ms))
      index.set(r.ip_hash, list)
    }
    return index
  }

  /** Retention: trap hits older than the window are deleted (they no longer count anyway). */
  async pruneTraps(nowMs: number): Promise<number> {
    const inv = this.inv
    return this.db.tx(function* () {
      const n = yield* q.run('DELETE FROM trap_hits WHERE created_ms < ?', [nowMs - TRAP_WINDOW_MS])
      if (n) yield* inv.touch('traps')
      return n
    })
  }

  /**
   * Events and bad events per ASN and tenant since `sinceMs`, from the daily counters (bounded by days x
   * ASNs x tenants, never a scan of events), with whether the tenant shares its data with the network.
   */
  async asnRates(
    sinceMs: number,
  ): Promise<{ asn: number; tenantId: string; shared: boolean; events: number; bad: number }[]> {
    const rows = await this.db.all<{
      asn: number
      tenant_id: string
      share_network: number
      events: number
      bad: number
    }>(
      `SELECT a.asn AS asn, a.tenant_id AS tenant_id, t.share_network AS share_network,
              SUM(a.events) AS events, SUM(a.bad) AS bad
         FROM asn_daily a JOIN tenants t ON t.id = a.tenant_id
        WHERE a.day_ms >= ? GROUP BY a.asn, a.tenant_id, t.share_network`,
      [sinceMs],
    )
    return rows.map((r) => ({
      asn: Number(r.asn),
      tenantId: r.tenant_id,
      shared: Number(r.share_network) === 1,
      events: Number(r.events),
      bad: Number(r.bad),
    }))
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
