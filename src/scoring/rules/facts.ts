/** A caller attribute's value (bounds in src/schemas/score.ts): hashed ones hold their keyed hash. */
export type AttributeValue = string | number | boolean | string[]

/** A counted attribute's value over 10 minutes, 1 hour and 24 hours, this event included. */
export interface AttributeCounts {
  accounts_10m: number
  accounts_1h: number
  accounts_24h: number
  events_10m: number
  events_1h: number
  events_24h: number
}

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
