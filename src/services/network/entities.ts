import type { NetworkEntity } from '../../store/network/network.js'
import type { Hasher } from '../../util/secrets.js'

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
