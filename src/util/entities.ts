/**
 * The kinds of identifier the service hashes, lists, checks and shares, by their wire names: one union,
 * and the subsets some features take (each checked against it).
 */
export const ENTITY_KINDS = ['email', 'ip', 'phone', 'device', 'user'] as const
export type EntityKind = (typeof ENTITY_KINDS)[number]

/** The kinds a tenant list entry may name (an ip entry may be a CIDR range). */
export const LISTED_KINDS = [
  'ip',
  'email',
  'phone',
  'device',
  'user',
] as const satisfies readonly EntityKind[]
export type ListedKind = (typeof LISTED_KINDS)[number]

/**
 * What a list entry may hold: an identifier, or the value of one of the tenant's hashed attributes
 * (`attribute`, named lists only: rules read it as `lists.attributes.<key>`), kept as its keyed hash.
 */
export const LIST_ENTRY_TYPES = [...LISTED_KINDS, 'attribute'] as const
export type ListEntryType = (typeof LIST_ENTRY_TYPES)[number]

/** The kinds with an identifier check (`/v1/check/…`), as the lookup history records them. */
export const CHECKED_KINDS = ['email', 'ip', 'phone'] as const satisfies readonly EntityKind[]
export type CheckedKind = (typeof CHECKED_KINDS)[number]
