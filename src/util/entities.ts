/**
 * The kinds of identifier the service hashes, lists, checks and shares, by their wire names: one union,
 * and the subsets some features take (each checked against it).
 */
export const ENTITY_KINDS = ['email', 'ip', 'phone', 'device', 'user'] as const
export type EntityKind = (typeof ENTITY_KINDS)[number]

/** The kinds a tenant allow/block entry may name: phone numbers are not listable. */
export const LISTED_KINDS = ['ip', 'email', 'device', 'user'] as const satisfies readonly EntityKind[]
export type ListedKind = (typeof LISTED_KINDS)[number]

/** The kinds with an identifier check (`/v1/check/…`), as the lookup history records them. */
export const CHECKED_KINDS = ['email', 'ip', 'phone'] as const satisfies readonly EntityKind[]
export type CheckedKind = (typeof CHECKED_KINDS)[number]
