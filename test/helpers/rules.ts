import { unpackJson } from '../../src/store/events/compact-json.js'
import type { Harness } from './build.js'

/** A tenant rule as PUT /v1/config takes it: enforced for everyone, scoring 10 unless told otherwise. */
export const enforcedRule = (id: string, when: string, then: object = { score: 10 }) => ({
  id,
  when,
  then,
  mode: 'enforce',
  rollout: 100,
})

/** The counted attributes' figures recorded with an event (its engine input), as its rules saw them. */
export async function recordedAttributeCounts(
  h: Harness,
  eventId: string,
): Promise<Record<string, Record<string, number>>> {
  const row = await h.store.db.get<{ inputs: string }>('SELECT inputs FROM events WHERE id = ?', [eventId])
  return unpackJson<{ history: { attributes: Record<string, Record<string, number>> } }>(row!.inputs).history
    .attributes
}
