import { type Dialect, q, type Work } from '../engine/db.js'

/**
 * Locks the tenant's row against deletion until the transaction ends (PostgreSQL `FOR KEY SHARE`: it
 * blocks only a deletion or a key change, and many transactions hold it at once); false when the tenant
 * is gone. A transaction that writes one of the tables without a tenant foreign key
 * (schema/tenant-keys.ts) calls this before it writes them. SQLite needs no row lock: its transactions
 * take the database's write lock at BEGIN, so a deletion cannot run in between.
 */
export function* holdTenant(dialect: Dialect, tenantId: string): Work<boolean> {
  const row = yield* q.get<{ id: string }>(
    `SELECT id FROM tenants WHERE id = ?${tenantRowLock(dialect, 'KEY SHARE')}`,
    [tenantId],
  )
  return row !== undefined
}

/**
 * The clause that locks a selected tenant row on PostgreSQL: `KEY SHARE` holds off its deletion (as
 * above), `UPDATE` is the deletion's own. Nothing on SQLite, whose write lock is taken at BEGIN.
 */
export function tenantRowLock(dialect: Dialect, mode: 'KEY SHARE' | 'UPDATE'): string {
  return dialect === 'postgres' ? ` FOR ${mode}` : ''
}

/** The tenant is gone (deleted while its request ran): the request is refused and writes nothing. */
export class TenantGone extends Error {
  constructor(readonly tenantId: string) {
    super('the tenant no longer exists')
  }
}
