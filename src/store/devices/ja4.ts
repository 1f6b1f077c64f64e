import { type Db, q, type Work } from '../engine/db.js'
import { DAY_MS } from '../events/aggregates.js'

/** One JA4's beacons and spoofing beacons over a period, summed over every tenant. */
export interface Ja4Tally {
  ja4: string
  sessions: number
  spoofing: number
}

/**
 * The JA4 statistics behind `known_spoof_signature`. `ja4_daily` counts, per UTC day, JA4 and tenant, the
 * beacons that came over a connection with that JA4 and how many of them were spoofing; it is bumped in
 * the beacon's own transaction. `ja4_signatures` is the flagged set the `ja4-signatures` job derives from
 * it. Neither holds anything about a person: a JA4 describes a TLS client stack, and the counts are sums.
 * The tenant column exists so that deleting a tenant takes its counts with it (foreign key cascade).
 */
export class Ja4Store {
  constructor(private readonly db: Db) {}

  /** Counts one beacon with this JA4 (run inside the beacon's insert). */
  static *count(tenantId: string, ja4: string, createdMs: number, spoofing: boolean): Work<void> {
    yield* q.run(
      `INSERT INTO ja4_daily (day_ms, ja4, tenant_id, sessions, spoofing) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT (day_ms, ja4, tenant_id)
       DO UPDATE SET sessions = ja4_daily.sessions + 1, spoofing = ja4_daily.spoofing + excluded.spoofing`,
      [Math.floor(createdMs / DAY_MS) * DAY_MS, ja4, tenantId, spoofing ? 1 : 0],
    )
  }

  /** Every JA4's counts on the days from `sinceMs` on, all tenants together. */
  async tallies(sinceMs: number): Promise<Ja4Tally[]> {
    const rows = await this.db.all<{ ja4: string; sessions: number; spoofing: number }>(
      `SELECT ja4, SUM(sessions) AS sessions, SUM(spoofing) AS spoofing
         FROM ja4_daily WHERE day_ms >= ? GROUP BY ja4`,
      [sinceMs],
    )
    return rows.map((r) => ({ ja4: r.ja4, sessions: Number(r.sessions), spoofing: Number(r.spoofing) }))
  }

  /** Deletes the daily counts of the days that begin before `sinceMs`; returns how many rows went. */
  async prune(sinceMs: number): Promise<number> {
    return this.db.run('DELETE FROM ja4_daily WHERE day_ms < ?', [sinceMs])
  }

  /** Replaces the flagged set at once, so a reader sees the old set or the new one, never a mix. */
  async replaceSignatures(flagged: readonly Ja4Tally[], computedMs: number): Promise<void> {
    await this.db.tx(function* () {
      yield* q.run('DELETE FROM ja4_signatures')
      for (const s of flagged) {
        yield* q.run(
          'INSERT INTO ja4_signatures (ja4, sessions, spoofing, computed_ms) VALUES (?, ?, ?, ?)',
          [s.ja4, s.sessions, s.spoofing, computedMs],
        )
      }
    })
  }

  async signatures(): Promise<Ja4Tally[]> {
    const rows = await this.db.all<{ ja4: string; sessions: number; spoofing: number }>(
      'SELECT ja4, sessions, spoofing FROM ja4_signatures',
    )
    return rows.map((r) => ({ ja4: r.ja4, sessions: Number(r.sessions), spoofing: Number(r.spoofing) }))
  }
}
