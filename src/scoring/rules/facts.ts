/** A caller attribute's value (bounds in src/schemas/score.ts): hashed ones hold their keyed hash. */
export type AttributeValue = string | number | boolean | string[]

/**
 * What tenant rules read beyond the engine's own signals: the event's name and the caller's own fields,
 * e-mail and phone facts the built-in checks do not use, and the subject's rollout key. The services
 * gather it; it is recorded with the engine input, so replay and what-if see exactly what scoring saw.
 */
export interface RuleFacts {
  event: {
    name: string
    attributes: Record<string, AttributeValue>
    source: string | null
    site: string | null
    campaign: string | null
    affiliate: string | null
  }
  email: { free: boolean; aliased: boolean; alias_tricks: string[] } | null
  phone: { country: string | null; line_type: string | null; voip: boolean; disposable: boolean } | null
  /** A hash of the user id (or, without one, the resolved device): who is in or out of a rollout. */
  subject: string | null
}
