import type { NetworkSignals } from '../scoring/checks/network.js'
import type { Store } from '../store/index.js'
import type { NetworkEntity } from '../store/network.js'
import type { Hasher } from '../util/secrets.js'

/** ASN fraud rates: 7-day rolling window, at least 50 events, fires at 30 % bad (blocked or labelled fraud). */
export const ASN_WINDOW_MS = 7 * 24 * 3600_000
export const ASN_MIN_EVENTS = 50
export const ASN_RATE_THRESHOLD = 0.3

/**
 * Per-ASN fraud rates across the deployment, recomputed by a background job (every minute on the
 * server) so scoring reads them from memory instead of aggregating events on every request.
 */
export class AsnRates {
  private rates = new Map<number, { events: number; bad: number }>()
  refreshedMs: number | null = null

  async refresh(store: Store, nowMs: number): Promise<void> {
    const next = new Map<number, { events: number; bad: number }>()
    for (const r of await store.network.asnRates(nowMs - ASN_WINDOW_MS)) {
      if (r.events >= ASN_MIN_EVENTS) next.set(r.asn, { events: r.events, bad: r.bad })
    }
    this.rates = next
    this.refreshedMs = nowMs
  }

  get(asn: number | null): NetworkSignals['asn'] {
    if (asn === null) return null
    const r = this.rates.get(asn)
    return r
      ? { asn, events: r.events, bad: r.bad, rate: r.bad / r.events, threshold: ASN_RATE_THRESHOLD }
      : null
  }
}

/** The hash a suppression is recorded under: one-way, and keyed apart from the storage hashes. */
export function suppressionHash(hasher: Hasher, e: NetworkEntity): string {
  return hasher.mac('suppression', `${e.kind}\u0000${e.valueHash}`).toString('hex')
}

/** The network-facing hashes of an event's entities. */
export function networkEntities(
  hasher: Hasher,
  e: { ipHash: string | null; emailHash: string | null; deviceId: string | null; userId: string | null },
): NetworkEntity[] {
  const out: NetworkEntity[] = []
  if (e.ipHash) out.push({ kind: 'ip', valueHash: e.ipHash })
  if (e.emailHash) out.push({ kind: 'email', valueHash: e.emailHash })
  if (e.deviceId) out.push({ kind: 'device', valueHash: hasher.entity('device', e.deviceId) })
  if (e.userId) out.push({ kind: 'user', valueHash: hasher.entity('user', e.userId) })
  return out
}

/** Network signals of one event for one tenant: the tenant's suppressed entities are left out. */
export async function gatherNetwork(
  store: Store,
  hasher: Hasher,
  asnRates: AsnRates,
  tenantId: string,
  entities: NetworkEntity[],
  asn: number | null,
  nowMs: number,
): Promise<NetworkSignals> {
  const hashes = entities.map((e) => suppressionHash(hasher, e))
  const suppressed = await store.privacy.suppressed(tenantId, hashes)
  const active = entities.filter((_, i) => !suppressed.has(hashes[i]!))
  const ip = entities.find((e) => e.kind === 'ip')
  const [flags, trapHits] = await Promise.all([
    store.network.flaggedBy(active, nowMs),
    ip ? store.network.trapHits(ip.valueHash, nowMs) : Promise.resolve(0),
  ])
  return { flaggedOperators: flags.operators, flaggedKinds: flags.kinds, trapHits, asn: asnRates.get(asn) }
}
