import type { TenantContext } from '../../context.js'
import type { NetworkSignals } from '../../scoring/network-signals.js'
import type { EventAttributes } from '../../store/events/scored-event.js'
import type { NetworkEntity } from '../../store/network/network.js'
import { networkEntities, suppressionHash } from '../network/entities.js'

/** The identifiers of an event the network is asked about (an event's EventAttributes has them all). */
export type NetworkInputs = Pick<EventAttributes, 'ipHash' | 'emailHash' | 'deviceId' | 'userId' | 'asn'>

/**
 * Network signals of one event for one tenant, from memory: the tenant's suppressed entities are left
 * out (a suppressed IP also hides its trap hits). Entity and suppression hashes are only computed when
 * the network holds any flag or the tenant any suppression, which on most deployments it does not.
 */
export async function gatherNetwork(
  ctx: TenantContext,
  e: NetworkInputs,
  nowMs: number,
): Promise<NetworkSignals> {
  const { store, hasher } = ctx
  const [anyFlags, suppressions] = await Promise.all([
    store.network.anyFlags(),
    store.privacy.suppressionSet(ctx.tenant.id),
  ])
  let active: NetworkEntity[] = []
  if (anyFlags || suppressions.size > 0) {
    const entities = networkEntities(hasher, e)
    active = suppressions.size
      ? entities.filter((x) => !suppressions.has(suppressionHash(hasher, x)))
      : entities
  } else if (e.ipHash) active = [{ kind: 'ip', valueHash: e.ipHash }]
  const ip = active.find((x) => x.kind === 'ip')
  const [flags, trapHits] = await Promise.all([
    anyFlags ? store.network.flaggedBy(active, nowMs) : { operators: 0, kinds: {} },
    ip ? store.network.trapHits(ip.valueHash, nowMs) : 0,
  ])
  return {
    flaggedOperators: flags.operators,
    flaggedKinds: flags.kinds,
    trapHits,
    asn: ctx.asnRates.get(e.asn, ctx.tenant),
  }
}
