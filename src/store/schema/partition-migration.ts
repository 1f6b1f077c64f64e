/**
 * PostgreSQL only (migration 11): the per-event tables become tables partitioned by month on
 * `created_ms`, in place and in the migration's one transaction. Each table is renamed aside, a
 * partitioned twin is created with the same columns (LIKE keeps later added columns, defaults and
 * identities), monthly partitions are created from the oldest row's month (at most 60 months back) to
 * next month, plus a DEFAULT partition for anything outside them; the rows are copied, the old table is
 * dropped, and the primary key (now `(id, created_ms)`: a partitioned table's unique keys must hold
 * the partition key), the foreign keys to other tables and the indexes are created again on the parent
 * (PostgreSQL creates them on every partition).
 *
 * The foreign key from device_observations to events (ON DELETE CASCADE) cannot exist any more (it
 * would need a unique key on `events(id)` alone): erasure already deletes observations itself, and
 * retention deletes them by time. Partition names are `<table>_pYYYY_MM` (UTC months) and
 * `<table>_default`; store/schema/partitions.ts manages them afterwards. The copy of a large table takes
 * longer than the pool's statement timeout, which is lifted for this transaction.
 */
export const PARTITION_EVENT_TABLES = `
SET LOCAL statement_timeout = 0;
DO $mig$
DECLARE
  t TEXT;
  old TEXT;
  idx TEXT[];
  fks TEXT[][];
  def TEXT;
  i INTEGER;
  lo BIGINT;
  m TIMESTAMP;
  stop TIMESTAMP;
  old_seq TEXT;
  new_seq TEXT;
  next_id BIGINT;
BEGIN
  FOREACH t IN ARRAY ARRAY['events', 'device_observations', 'lookups'] LOOP
    old := t || '_unpartitioned';
    -- The indexes and foreign keys to re-create (the key to events goes: see above).
    SELECT COALESCE(array_agg(pg_get_indexdef(x.indexrelid)), '{}') INTO idx
      FROM pg_index x WHERE x.indrelid = t::regclass AND NOT x.indisprimary;
    SELECT COALESCE(array_agg(ARRAY[c.conname::TEXT, pg_get_constraintdef(c.oid)]), '{}') INTO fks
      FROM pg_constraint c
     WHERE c.conrelid = t::regclass AND c.contype = 'f' AND c.confrelid <> 'events'::regclass;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t, old);
    EXECUTE format(
      'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS) PARTITION BY RANGE (created_ms)',
      t, old);
    EXECUTE format('SELECT MIN(created_ms) FROM %I', old) INTO lo;
    stop := date_trunc('month', now() AT TIME ZONE 'UTC') + INTERVAL '2 months';
    m := date_trunc('month', to_timestamp(COALESCE(lo / 1000.0, extract(epoch FROM now()))) AT TIME ZONE 'UTC');
    m := LEAST(GREATEST(m, stop - INTERVAL '62 months'), stop - INTERVAL '2 months');
    WHILE m < stop LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
        t || to_char(m, '"_p"YYYY_MM'), t,
        (extract(epoch FROM m AT TIME ZONE 'UTC') * 1000)::BIGINT,
        (extract(epoch FROM (m + INTERVAL '1 month') AT TIME ZONE 'UTC') * 1000)::BIGINT);
      m := m + INTERVAL '1 month';
    END LOOP;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', t || '_default', t);
    EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM %I', t, old);
    -- Identities continue after the old table's last value, so no id is handed out twice.
    old_seq := pg_get_serial_sequence(old, 'id');
    new_seq := pg_get_serial_sequence(t, 'id');
    IF new_seq IS NOT NULL THEN
      EXECUTE format('SELECT GREATEST(COALESCE(pg_sequence_last_value(%L), 0), COALESCE(MAX(id), 0)) + 1 FROM %I',
        old_seq, old) INTO next_id;
      PERFORM setval(new_seq, next_id, false);
    END IF;
    -- CASCADE drops only the foreign key of the old device_observations that pointed at the old events.
    EXECUTE format('DROP TABLE %I CASCADE', old);
    EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (id, created_ms)', t);
    FOR i IN 1 .. COALESCE(array_length(fks, 1), 0) LOOP
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', t, fks[i][1], fks[i][2]);
    END LOOP;
    FOREACH def IN ARRAY idx LOOP
      EXECUTE def;
    END LOOP;
  END LOOP;
END
$mig$;
`
