import type { NetworkSignals } from '../../scoring/network-signals.js'
import { DAY_MS } from '../../store/events/aggregates.js'
import type { Store } from '../../store/index.js'

/** ASN fraud rates: the last 7 days (whole UTC days), at least 50 events, fires at 30 % bad. */
export const ASN_WINDOW_MS = 7 * 24 * 3600_000
export const ASN_MIN_EVENTS = 50
export const ASN_RATE_THRESHOLD = 0.3

type Tally = { events: number; bad: number }

function addTo(map: Map<number, Tally>, asn: number, events: number, bad: number): void {
  const t = map.get(asn)
  if (t) {
    t.events += events
    t.bad += bad
  } else map.set(asn, { events, bad })
}

/**
 * Per-ASN fraud rates, recomputed by a background job from the daily ASN counters so scoring reads them
 * from memory. Opted-in tenants' events make the shared rate; a tenant that does not share also counts
 * its own events, for itself only. An event is bad when it was labelled fraud/chargeback or when its
 * score without network-derived and list checks reached the block threshold, so the rate can neither
 * feed itself nor be manufactured with a blocklist.
 */
export class AsnRates {
  private shared = new Map<number, Tally>()
  private own = new Map<string, Map<number, Tally>>()
  refreshedMs: number | null = null

  async refresh(store: Store, nowMs: number): Promise<void> {
    const since = Math.floor((nowMs - ASN_WINDOW_MS) / DAY_MS) * DAY_MS
    const shared = new Map<number, Tally>()
    const own = new Map<string, Map<number, Tally>>()
    for (const r of await store.network.asnRates(since)) {
      if (r.shared) addTo(shared, r.asn, r.events, r.bad)
      else {
        const mine = own.get(r.tenantId) ?? new Map<number, Tally>()
        addTo(mine, r.asn, r.events, r.bad)
        own.set(r.tenantId, mine)
      }
    }
    this.shared = shared
    this.own = own
    this.refreshedMs = nowMs
  }

  get(asn: number | null, tenant: { id: string; shareNetwork: boolean }): NetworkSignals['asn'] {
    if (asn === null) return null
    const s = this.shared.get(asn)
    const o = tenant.shareNetwork ? undefined : this.own.get(tenant.id)?.get(asn)
    const events = (s?.events ?? 0) + (o?.events ?? 0)
    const bad = (s?.bad ?? 0) + (o?.bad ?? 0)
    if (events < ASN_MIN_EVENTS) return null
    return { asn, events, bad, rate: bad / events, threshold: ASN_RATE_THRESHOLD }
  }
}
