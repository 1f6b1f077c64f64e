import type { Hasher } from '../../util/secrets.js'
import type { LiteralHash } from './compile.js'

/**
 * The keyed hash of one of a tenant's attribute values (docs/rules.md, "Hashed and counted
 * attributes"): what a hashed attribute's value becomes when a request is read, what a string compared
 * with it in a rule becomes when the rule is compiled, and what an `attribute` list entry stores, so
 * equal values meet as equal hashes. Keyed with the server secret and the tenant.
 */
export function attributeHash(hasher: Hasher, tenantId: string): LiteralHash {
  return {
    scope: tenantId,
    hash: (value) => hasher.mac('attribute', `${tenantId}\u0000${value}`).toString('hex'),
  }
}
