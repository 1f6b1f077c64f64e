import { notFound } from '../errors.js'
import { replayEvent } from '../services/decisions/replay.js'
import type { Store } from '../store/index.js'
import type { Hasher } from '../util/secrets.js'
import { UsageError } from './errors.js'

/**
 * `verdict replay EVENT_ID`: the operator names an event by its id alone, so its tenant is looked up
 * first; the replay itself is the tenant-scoped service behind POST /v1/replay.
 */
export async function replayCommand(
  args: string[],
  store: Store,
  hasher: Hasher | undefined,
  out: (value: unknown) => void,
): Promise<number> {
  const [eventId, ...extra] = args
  if (!eventId || eventId.startsWith('-')) throw new UsageError('replay takes an EVENT_ID')
  if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`)
  const tenantId = await store.decisions.tenantOfEvent(eventId)
  const tenant = tenantId ? await store.tenants.get(tenantId) : undefined
  if (!tenant) throw notFound(`no event ${eventId}`)
  out(await replayEvent(hasher ? { store, tenant, hasher } : { store, tenant }, eventId))
  return 0
}
