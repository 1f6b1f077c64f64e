/**
 * The tables the scoring group writes for every event, which on PostgreSQL hold no foreign key to
 * `tenants` (migration 34). Each such key made every inserted row run a check that locks the tenant's
 * row (`SELECT … FOR KEY SHARE`), 8-12 per scored event, and all of a tenant's concurrent scoring
 * transactions shared that one row lock (a multixact, with its WAL record, per lock). Instead:
 *
 * - a scoring group locks the tenant row once, at the tenant's first job, before the job writes
 *   anything (store/access/usage.ts `reading`), and refuses the job when the tenant is gone;
 * - deleting a tenant locks its row first (`FOR UPDATE`: it waits for every group holding the lock),
 *   then deletes the tenant's rows of these tables itself, then the tenant row (store/access/tenants.ts).
 *
 * Every other writer of these tables writes in a transaction that locks the tenant row first the same
 * way (labels, erasure: `holdTenant` below). SQLite keeps its foreign keys (its check is a probe of the
 * tenant's primary key in process, and dropping a key there means rebuilding the table); the deletion
 * deletes these tables' rows itself on both engines. Children first: on SQLite observations reference
 * events.
 */
export const UNKEYED_TENANT_TABLES = [
  'device_observations',
  'events',
  'device_links',
  'device_link_counts',
  'ip_accounts',
  'attribute_accounts',
  'attribute_events',
  'event_rollup',
  'asn_daily',
] as const

/** Migration 34 (PostgreSQL): drops those keys; on a partitioned parent the partitions' keys go with it. */
export const DROP_TENANT_KEYS = `
DO $mig$
DECLARE
  t TEXT;
  c TEXT;
BEGIN
  FOREACH t IN ARRAY ARRAY['${UNKEYED_TENANT_TABLES.join("', '")}'] LOOP
    FOR c IN SELECT conname FROM pg_constraint
              WHERE conrelid = t::regclass AND contype = 'f' AND confrelid = 'tenants'::regclass LOOP
      EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', t, c);
    END LOOP;
  END LOOP;
END
$mig$;
`
