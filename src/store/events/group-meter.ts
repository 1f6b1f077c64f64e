import { TenantGone } from '../access/tenant-hold.js'
import type { UsageStore } from '../access/usage.js'
import { together, type Work } from '../engine/db.js'

interface Tally {
  tenantId: string
  period: string
  /** The reading the group started from for this tenant and month. */
  used: number
  /** Units the group's accepted jobs need. */
  units: number
  /** The smallest quota any of those jobs was held to. */
  quota: number
}

/** The final meter write found the quota taken by another transaction meanwhile: run the group again exactly. */
export class MeterOvertaken extends Error {
  constructor(readonly keys: readonly (readonly [string, string])[]) {
    super('the monthly meter moved while the group ran')
  }
}

const keyOf = (tenantId: string, period: string) => `${tenantId}\u0000${period}`

/**
 * The monthly meter of one group commit (services/runtime/group-writer.ts). A job's units are checked against
 * the reading plus what the group has already accepted, so refusals are decided before a job writes
 * anything; the accepted units are written once per tenant and month, as the group's last statements
 * before its counters and COMMIT. On PostgreSQL the tenant's usage row is therefore locked only for the
 * end of the transaction, not for the whole group: two nodes' groups for one tenant no longer queue on it.
 *
 * Exactness: the final write adds the units only while `used + units <= quota` (the same guarded upsert
 * as a single request's meter). Readings only grow within a month, so a reading taken without a lock can
 * only be too low: a job refused on it would be refused on the true value too, and when another node
 * used the room meanwhile the final write refuses and the group is rolled back and run again in `exact`
 * mode, where the rows are locked and read before any job runs. The quota is never passed and a refused
 * job is never metered.
 */
export class GroupMeter {
  private readonly tallies = new Map<string, Tally>()

  /**
   * @param exact lock each usage row when first met (and via lock() up front) instead of reading it.
   * @param failsOnServer write with `meterOrFail` (PostgreSQL: the group's end is not read back, it goes
   * out with COMMIT), so an overtaken quota fails the transaction; the caller maps QUOTA_OVERTAKEN to
   * MeterOvertaken with `keys()`.
   */
  constructor(
    private readonly usage: UsageStore,
    private readonly exact = false,
    private readonly failsOnServer = false,
  ) {}

  /** Exact mode: locks and reads the given rows, sorted (every group locks usage rows in one order). */
  *lock(keys: readonly (readonly [string, string])[]): Work<void> {
    const sorted = [...keys].sort((a, b) => (keyOf(...a) < keyOf(...b) ? -1 : 1))
    // A tenant gone meanwhile is skipped here; its jobs refuse in take().
    for (const [tenantId, period] of sorted) yield* this.tally(tenantId, period, Infinity)
  }

  /**
   * Accepts `units` for the tenant's month if they fit; false (nothing counted) if they do not. The
   * tenant's first job in the group locks the tenant row (usage.ts `reading`) before it writes anything;
   * throws TenantGone when the tenant has been deleted.
   */
  *take(tenantId: string, period: string, units: number, quota: number): Work<boolean> {
    if (units > quota) return false
    const t = yield* this.tally(tenantId, period, quota)
    if (t === undefined) throw new TenantGone(tenantId)
    if (t.used + t.units + units > quota) return false
    t.units += units
    t.quota = Math.min(t.quota, quota)
    return true
  }

  /**
   * Writes the accepted units, one batch for every tenant and month, sorted (a batch's parts lock their
   * rows in order, one statement after another); throws MeterOvertaken (the caller rolls back) when they no
   * longer fit.
   */
  *flush(): Work<void> {
    const tallies = this.accepted()
    if (this.failsOnServer) {
      // PostgreSQL: an overtaken quota fails the statement (QUOTA_OVERTAKEN), nothing is read back.
      yield* together(...tallies.map((t) => this.usage.meterOrFail(t.tenantId, t.period, t.units, t.quota)))
      return
    }
    const fitted = yield* together<boolean[]>(
      ...tallies.map((t) => this.usage.meter(t.tenantId, t.period, t.units, t.quota)),
    )
    if (fitted.some((ok) => !ok)) throw new MeterOvertaken(this.keys())
  }

  /** The tallies with units to write, sorted (every group writes usage rows in one order). */
  private accepted(): Tally[] {
    return [...this.tallies.values()]
      .filter((t) => t.units > 0)
      .sort((a, b) => (keyOf(a.tenantId, a.period) < keyOf(b.tenantId, b.period) ? -1 : 1))
  }

  /** The usage rows this group meters, for running it again exactly. */
  keys(): (readonly [string, string])[] {
    return [...this.tallies.values()].map((x) => [x.tenantId, x.period] as const)
  }

  /** After COMMIT: the process's last readings include what this group metered (`failsOnServer`). */
  committed(): void {
    if (!this.failsOnServer) return
    for (const t of this.accepted()) this.usage.noteMetered(t.tenantId, t.period, t.used + t.units)
  }

  /** The tenant's tally, read (and the tenant row locked) when first met; undefined: the tenant is gone. */
  private *tally(tenantId: string, period: string, quota: number): Work<Tally | undefined> {
    const key = keyOf(tenantId, period)
    let t = this.tallies.get(key)
    if (!t) {
      const used = this.exact
        ? yield* this.usage.lockedReading(tenantId, period)
        : yield* this.usage.reading(tenantId, period)
      if (used === null) return undefined
      // Two jobs of the tenant side by side (store/engine/overlap.ts) read it in one statement: the
      // second finds the first's tally, with the units it has taken since.
      t = this.tallies.get(key)
      if (!t) {
        t = { tenantId, period, used, units: 0, quota }
        this.tallies.set(key, t)
      }
    }
    return t
  }
}
