import type { Store } from '../../store/index.js'
import type { ErasedCounts, SubjectKeys } from '../../store/privacy/privacy.js'
import type { AuditRow, StoredIdentifiers } from '../../store/privacy/restore.js'
import type { Clock } from '../../util/clock.js'
import type { Hasher } from '../../util/secrets.js'
import { suppressionHash } from '../network/entities.js'
import { ERASED_TABLES } from './privacy.js'

export type { AuditRow } from '../../store/privacy/restore.js'

/** What re-applying an audit did. */
export interface AuditApplied {
  /** Audit rows the database lacked and now holds. */
  carried: number
  /** Stored identifiers that matched a `forget` and were erased again. */
  reapplied: number
  deleted: ErasedCounts
  /** Audit rows of tenants this database does not hold (nothing to act on). */
  skipped: number
}

/** A short keyed check of the server secret: equal only when the secret is, and it reveals nothing of it. */
export const secretCheck = (hasher: Hasher) =>
  hasher.mac('backup-check', 'verdict').subarray(0, 8).toString('hex')

/** The audit file `verdict audit export` writes and `verdict audit apply` reads. */
export interface AuditFile {
  verdictAudit: 1
  exportedAt: string
  secretCheck: string
  rows: AuditRow[]
}

/** The suppression audit of every tenant, oldest first: what a restore must carry over. */
export async function exportAudit(store: Store, hasher: Hasher, clock: Clock): Promise<AuditFile> {
  return {
    verdictAudit: 1,
    exportedAt: new Date(clock.now()).toISOString(),
    secretCheck: secretCheck(hasher),
    rows: await store.restore.audit(),
  }
}

/** Parses an audit file; a message names what is wrong (the caller reports it). */
export function parseAuditFile(text: string, hasher: Hasher): AuditFile {
  let body: Partial<AuditFile>
  try {
    body = JSON.parse(text) as Partial<AuditFile>
  } catch {
    throw new Error('not an audit file (not JSON)')
  }
  if (body.verdictAudit !== 1 || !Array.isArray(body.rows)) throw new Error('not a verdict audit file')
  if (body.secretCheck !== secretCheck(hasher))
    throw new Error('the audit was exported with another server secret: apply it with that secret')
  for (const r of body.rows) {
    const ok =
      typeof r?.tenantId === 'string' &&
      (r.action === 'forget' || r.action === 'legit' || r.action === 'withdraw') &&
      typeof r.entityType === 'string' &&
      typeof r.valueHash === 'string' &&
      (r.eventId === null || typeof r.eventId === 'string') &&
      Number.isSafeInteger(r.createdMs)
    if (!ok) throw new Error(`malformed audit row: ${JSON.stringify(r).slice(0, 200)}`)
  }
  return body as AuditFile
}

/**
 * Makes a database (typically just restored from a backup) honour an audit taken from elsewhere
 * (typically the database it replaced): adds the suppressions it lacks, and erases again, as
 * /v1/forget does, every stored identifier whose suppression hash matches a `forget`. Needs the
 * secret the hashes were made with.
 */
export async function applyAudit(
  store: Store,
  hasher: Hasher,
  clock: Clock,
  audit: readonly AuditRow[],
): Promise<AuditApplied> {
  const tenants = await store.restore.tenantIds()
  const rows = audit.filter((r) => tenants.has(r.tenantId))
  const carried = await store.restore.carry(rows)
  const deleted: ErasedCounts = {
    events: 0,
    lookups: 0,
    listEntries: 0,
    labels: 0,
    observations: 0,
    idempotentResponses: 0,
  }
  let reapplied = 0
  for (const tenantId of tenants) {
    const forgotten = new Set(
      rows.filter((r) => r.tenantId === tenantId && r.action === 'forget').map((r) => r.valueHash),
    )
    if (forgotten.size === 0) continue
    for (const keys of suppressedKeys(hasher, await store.restore.identifiers(tenantId), forgotten)) {
      const counts = await store.db.tx(function* () {
        const erased = yield* store.privacy.erase(tenantId, keys)
        yield* store.compaction.mark(ERASED_TABLES, clock.now())
        return erased
      })
      for (const k of Object.keys(deleted) as (keyof ErasedCounts)[]) deleted[k] += counts[k]
      reapplied++
    }
  }
  if (reapplied > 0) await store.db.reclaim(ERASED_TABLES)
  return { carried, reapplied, deleted, skipped: audit.length - rows.length }
}

/** The stored identifiers whose suppression hash is in `forgotten`, one erasure key set each. */
function suppressedKeys(hasher: Hasher, ids: StoredIdentifiers, forgotten: Set<string>): SubjectKeys[] {
  const out: SubjectKeys[] = []
  const test = (kind: keyof StoredIdentifiers, storageHash: string, keys: SubjectKeys) => {
    if (forgotten.has(suppressionHash(hasher, { kind, valueHash: storageHash }))) out.push(keys)
  }
  for (const v of ids.email) test('email', v, { emailHash: v })
  for (const v of ids.ip) test('ip', v, { ipHash: v })
  for (const v of ids.phone) test('phone', v, { phoneHash: v })
  for (const v of ids.device) test('device', hasher.entity('device', v), { deviceId: v })
  for (const v of ids.user) test('user', hasher.entity('user', v), { userId: v })
  return out
}
