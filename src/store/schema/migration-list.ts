import { PARTITION_EVENT_TABLES } from './partition-migration.js'
import { DROP_TENANT_KEYS } from './tenant-keys.js'

export interface Migration {
  version: number
  name: string
  /** One text for both engines; dialect differences are tokens (migrations.ts renders them). */
  sql: string
  /** Runs on this engine only; the others record the version and change nothing. */
  only?: 'sqlite' | 'postgres'
}

/** Every schema version, in the order they apply. A new one goes at the end with the next number. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants, keys, config, lists, usage',
    sql: `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  share_network INTEGER NOT NULL DEFAULT 0,
  rate_limit INTEGER NOT NULL,
  monthly_quota INTEGER NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  revoked_ms BIGINT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
CREATE TABLE tenant_config (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  section TEXT NOT NULL,
  key TEXT NOT NULL,
  value {{REAL}} NOT NULL,
  PRIMARY KEY (tenant_id, section, key)
);
CREATE TABLE list_entries (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  list TEXT NOT NULL,
  type TEXT NOT NULL,
  value_key TEXT NOT NULL,
  hint TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  UNIQUE (tenant_id, list, type, value_key)
);
CREATE INDEX list_entries_match ON list_entries (tenant_id, type, value_key);
CREATE TABLE usage (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  period TEXT NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, period)
);
`,
  },
  {
    version: 2,
    name: 'events, lookups, operator network',
    sql: `
CREATE TABLE events (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  created_ms BIGINT NOT NULL,
  event TEXT NOT NULL,
  user_id TEXT,
  device_id TEXT,
  email_hash TEXT,
  email_domain TEXT,
  ip_hash TEXT,
  ip_prefix TEXT,
  asn INTEGER,
  ip_country TEXT,
  phone_hash TEXT,
  phone_country TEXT,
  score {{REAL}} NOT NULL,
  verdict TEXT NOT NULL,
  reasons TEXT NOT NULL,
  checks TEXT NOT NULL
);
CREATE INDEX events_tenant_time ON events (tenant_id, created_ms);
CREATE INDEX events_ip ON events (tenant_id, ip_hash, created_ms);
CREATE INDEX events_user ON events (tenant_id, user_id);
CREATE INDEX events_device ON events (tenant_id, device_id, created_ms);
CREATE INDEX events_email ON events (tenant_id, email_hash);
CREATE INDEX events_phone ON events (tenant_id, phone_hash);
CREATE INDEX events_asn ON events (asn, created_ms);
CREATE TABLE event_reasons (
  event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (event_id, reason)
);
CREATE INDEX event_reasons_tenant_time ON event_reasons (tenant_id, created_ms);
CREATE TABLE lookups (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  value_hash TEXT NOT NULL,
  hint TEXT NOT NULL,
  fraud_score {{REAL}} NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE INDEX lookups_tenant_time ON lookups (tenant_id, created_ms);
CREATE INDEX lookups_value ON lookups (tenant_id, value_hash);
CREATE TABLE network_flags (
  id {{SERIAL_PK}},
  entity_kind TEXT NOT NULL,
  value_hash TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  label TEXT NOT NULL,
  event_id TEXT,
  created_ms BIGINT NOT NULL
);
CREATE INDEX network_flags_entity ON network_flags (entity_kind, value_hash, created_ms);
CREATE TABLE trap_hits (
  id {{SERIAL_PK}},
  ip_hash TEXT NOT NULL,
  ip_prefix TEXT NOT NULL,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE INDEX trap_hits_ip ON trap_hits (ip_hash, created_ms);
`,
  },
  {
    version: 3,
    name: 'covering index for IP velocity',
    sql: `
DROP INDEX events_ip;
CREATE INDEX events_ip ON events (tenant_id, ip_hash, created_ms, user_id);
`,
  },
  {
    version: 4,
    name: 'device observations, resolved device on events, collision rates',
    sql: `
ALTER TABLE events ADD COLUMN resolved_device_id TEXT;
CREATE TABLE device_observations (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  created_ms BIGINT NOT NULL,
  device_id TEXT,
  resolved_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  rung INTEGER NOT NULL,
  user_id TEXT,
  ip_hash TEXT,
  ip_prefix TEXT,
  asn INTEGER,
  country TEXT,
  connection_type TEXT,
  platform TEXT,
  verdict TEXT NOT NULL
);
CREATE INDEX device_obs_fingerprint ON device_observations (tenant_id, device_id, created_ms);
CREATE INDEX device_obs_token ON device_observations (tenant_id, token_id, created_ms);
CREATE INDEX device_obs_resolved ON device_observations (tenant_id, resolved_id, created_ms);
CREATE INDEX device_obs_event ON device_observations (event_id);
CREATE INDEX device_obs_rung_time ON device_observations (rung, created_ms);
CREATE TABLE device_collision_rates (
  platform TEXT PRIMARY KEY,
  fingerprints INTEGER NOT NULL,
  collided INTEGER NOT NULL,
  rate {{REAL}} NOT NULL,
  measured_ms BIGINT NOT NULL
);
`,
  },
  {
    version: 5,
    name: 'labels and suppressions',
    sql: `
CREATE TABLE labels (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  event_id TEXT,
  label TEXT NOT NULL,
  note TEXT,
  email_hash TEXT,
  ip_hash TEXT,
  device_id TEXT,
  user_id TEXT,
  created_ms BIGINT NOT NULL
);
CREATE INDEX labels_tenant_event ON labels (tenant_id, event_id);
CREATE INDEX labels_event ON labels (event_id);
CREATE TABLE suppressions (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  action TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  value_hash TEXT NOT NULL,
  event_id TEXT,
  created_ms BIGINT NOT NULL
);
CREATE INDEX suppressions_tenant_time ON suppressions (tenant_id, created_ms);
CREATE INDEX suppressions_value ON suppressions (tenant_id, value_hash);
CREATE INDEX network_flags_tenant ON network_flags (tenant_id, entity_kind, value_hash);
`,
  },
  {
    version: 6,
    name: 'maintained aggregates for constant-cost scoring',
    sql: `
CREATE TABLE device_links (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  member TEXT NOT NULL,
  PRIMARY KEY (tenant_id, key, kind, member)
) {{WITHOUT_ROWID}};
CREATE TABLE device_link_counts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  last_ms BIGINT NOT NULL,
  platform TEXT,
  PRIMARY KEY (tenant_id, kind, key)
) {{WITHOUT_ROWID}};
CREATE INDEX device_link_counts_ft ON device_link_counts (last_ms) WHERE kind = 'ft';
INSERT INTO device_links (tenant_id, kind, key, member)
  SELECT DISTINCT tenant_id, 'fa', device_id, user_id FROM device_observations WHERE device_id IS NOT NULL AND user_id IS NOT NULL
  UNION SELECT DISTINCT tenant_id, 'fna', device_id || '|' || ip_prefix, user_id FROM device_observations
    WHERE device_id IS NOT NULL AND ip_prefix IS NOT NULL AND user_id IS NOT NULL
  UNION SELECT DISTINCT tenant_id, 'fi', device_id, ip_hash FROM device_observations WHERE device_id IS NOT NULL AND ip_hash IS NOT NULL
  UNION SELECT DISTINCT tenant_id, 'ta', token_id, user_id FROM device_observations WHERE user_id IS NOT NULL
  UNION SELECT DISTINCT tenant_id, 'ti', token_id, ip_hash FROM device_observations WHERE ip_hash IS NOT NULL
  UNION SELECT DISTINCT tenant_id, 'ft', device_id, token_id FROM device_observations WHERE rung = 1 AND device_id IS NOT NULL;
INSERT INTO device_link_counts (tenant_id, kind, key, n, last_ms, platform)
  SELECT l.tenant_id, l.kind, l.key, COUNT(*), 0, NULL FROM device_links l WHERE l.kind = 'ft'
   GROUP BY l.tenant_id, l.kind, l.key;
UPDATE device_link_counts SET last_ms = COALESCE((SELECT MAX(o.created_ms) FROM device_observations o
  WHERE o.tenant_id = device_link_counts.tenant_id AND o.device_id = device_link_counts.key AND o.rung = 1), 0);
CREATE TABLE event_rollup (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  hour_ms BIGINT NOT NULL,
  verdict TEXT NOT NULL,
  reason TEXT NOT NULL,
  n INTEGER NOT NULL,
  score_sum {{REAL}} NOT NULL,
  PRIMARY KEY (tenant_id, hour_ms, verdict, reason)
) {{WITHOUT_ROWID}};
INSERT INTO event_rollup (tenant_id, hour_ms, verdict, reason, n, score_sum)
  SELECT tenant_id, {{HOUR}}, verdict, '', COUNT(*), SUM(score) FROM events GROUP BY tenant_id, {{HOUR}}, verdict;
INSERT INTO event_rollup (tenant_id, hour_ms, verdict, reason, n, score_sum)
  SELECT r.tenant_id, (r.created_ms / 3600000) * 3600000, e.verdict, r.reason, COUNT(*), 0
    FROM event_reasons r JOIN events e ON e.id = r.event_id
   GROUP BY r.tenant_id, (r.created_ms / 3600000) * 3600000, e.verdict, r.reason;
DROP TABLE event_reasons;
ALTER TABLE events ADD COLUMN asn_bad INTEGER NOT NULL DEFAULT 0;
UPDATE events SET asn_bad = 1 WHERE EXISTS (SELECT 1 FROM labels l WHERE l.event_id = events.id AND l.label IN ('fraud', 'chargeback'));
CREATE TABLE asn_daily (
  day_ms BIGINT NOT NULL,
  asn INTEGER NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  events INTEGER NOT NULL,
  bad INTEGER NOT NULL,
  PRIMARY KEY (day_ms, asn, tenant_id)
) {{WITHOUT_ROWID}};
INSERT INTO asn_daily (day_ms, asn, tenant_id, events, bad)
  SELECT {{DAY}}, asn, tenant_id, COUNT(*), SUM(asn_bad) FROM events WHERE asn IS NOT NULL
   GROUP BY {{DAY}}, asn, tenant_id;
DROP INDEX events_asn;
DROP INDEX device_obs_rung_time;
CREATE INDEX trap_hits_ip_path ON trap_hits (ip_hash, path, created_ms);
CREATE INDEX trap_hits_time ON trap_hits (created_ms);
`,
  },
  {
    version: 7,
    name: 'leases of background jobs',
    sql: `
CREATE TABLE job_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_ms BIGINT NOT NULL
);
`,
  },
  {
    version: 8,
    name: 'publishable keys and beacon observations',
    sql: `
ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'secret';
ALTER TABLE api_keys ADD COLUMN origins TEXT;
CREATE TABLE beacon_observations (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  device_id TEXT NOT NULL,
  visit_id TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  ip_hash TEXT,
  os TEXT,
  browser TEXT,
  mobile INTEGER NOT NULL,
  flags TEXT NOT NULL
);
CREATE INDEX beacon_obs_latest ON beacon_observations (tenant_id, device_id, created_ms);
CREATE INDEX beacon_obs_time ON beacon_observations (created_ms);
`,
  },
  {
    version: 9,
    name: 'rung-2 identity per fingerprint and network, connection class of beacons',
    sql: `
CREATE INDEX device_obs_fingerprint_network ON device_observations (tenant_id, device_id, ip_prefix, created_ms, id);
ALTER TABLE beacon_observations ADD COLUMN connection_type TEXT;
`,
  },
  {
    version: 10,
    name: 'JA4 of beacon connections and spoofing signatures',
    sql: `
ALTER TABLE beacon_observations ADD COLUMN ja4 TEXT;
CREATE TABLE ja4_daily (
  day_ms BIGINT NOT NULL,
  ja4 TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  sessions BIGINT NOT NULL,
  spoofing BIGINT NOT NULL,
  PRIMARY KEY (day_ms, ja4, tenant_id)
) {{WITHOUT_ROWID}};
CREATE INDEX ja4_daily_tenant ON ja4_daily (tenant_id);
CREATE TABLE ja4_signatures (
  ja4 TEXT PRIMARY KEY,
  sessions BIGINT NOT NULL,
  spoofing BIGINT NOT NULL,
  computed_ms BIGINT NOT NULL
);
`,
  },
  {
    version: 11,
    name: 'monthly partitions of the event tables (PostgreSQL)',
    sql: PARTITION_EVENT_TABLES,
    only: 'postgres',
  },
  {
    version: 12,
    name: 'device links age out with retention',
    // Links recorded before this migration count as seen when it ran: they are kept a full retention
    // period from then (a constant default adds the column without rewriting the table on either engine).
    sql: `
ALTER TABLE device_links ADD COLUMN last_ms BIGINT NOT NULL DEFAULT {{NOW_MS}};
CREATE INDEX device_links_age ON device_links (tenant_id, last_ms);
`,
  },
  {
    version: 13,
    name: 'tables waiting for a rewrite after an erasure',
    sql: `
CREATE TABLE storage_compaction (
  table_name TEXT PRIMARY KEY,
  since_ms BIGINT NOT NULL
);
`,
  },
  {
    version: 14,
    name: 'idempotency keys',
    sql: `
CREATE TABLE idempotency_keys (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  body TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, key_hash)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_ms);
`,
  },
  {
    version: 15,
    name: 'config versions and replayable events',
    sql: `
CREATE TABLE config_versions (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  created_ms BIGINT NOT NULL,
  config TEXT NOT NULL,
  PRIMARY KEY (tenant_id, version)
);
ALTER TABLE events ADD COLUMN config_version INTEGER;
ALTER TABLE events ADD COLUMN rules_version TEXT;
ALTER TABLE events ADD COLUMN inputs TEXT;
`,
  },
  {
    version: 16,
    name: 'console users and sessions',
    sql: `
CREATE TABLE console_users (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE INDEX console_users_tenant ON console_users (tenant_id);
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  created_ms BIGINT NOT NULL,
  last_ms BIGINT NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_age ON console_sessions (last_ms);
`,
  },
  {
    version: 17,
    name: 'IP velocity aggregate',
    // Pairs of the last hour are enough (older ones are never counted); later ones come with each event.
    sql: `
CREATE TABLE ip_accounts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  ip_hash TEXT NOT NULL,
  user_id TEXT NOT NULL,
  last_ms BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, ip_hash, user_id)
) {{WITHOUT_ROWID}};
CREATE INDEX ip_accounts_recent ON ip_accounts (tenant_id, ip_hash, last_ms);
CREATE INDEX ip_accounts_age ON ip_accounts (last_ms);
INSERT INTO ip_accounts (tenant_id, ip_hash, user_id, last_ms)
  SELECT tenant_id, ip_hash, user_id, MAX(created_ms) FROM events
   WHERE ip_hash IS NOT NULL AND user_id IS NOT NULL AND created_ms > {{NOW_MS}} - 3600000
   GROUP BY tenant_id, ip_hash, user_id;
`,
  },
  {
    version: 18,
    name: 'tenant rules and shadow hits',
    sql: `
CREATE TABLE tenant_rules (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  rules TEXT NOT NULL
);
ALTER TABLE events ADD COLUMN shadow_rules TEXT;
`,
  },
  {
    version: 19,
    name: 'idempotent responses by event',
    // Which events a stored response names, so erasure deletes the response with the events.
    sql: `
CREATE TABLE idempotency_events (
  tenant_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  PRIMARY KEY (tenant_id, event_id, key_hash),
  FOREIGN KEY (tenant_id, key_hash) REFERENCES idempotency_keys (tenant_id, key_hash) ON DELETE CASCADE
) {{WITHOUT_ROWID}};
CREATE INDEX idempotency_events_key ON idempotency_events (tenant_id, key_hash);
`,
  },
  {
    version: 20,
    name: 'beacon network',
    // Keyed hash of the beacon's IPv4 /24 or IPv6 /64: a score uses only a beacon from its own network.
    sql: `
ALTER TABLE beacon_observations ADD COLUMN net_hash TEXT;
`,
  },
  {
    version: 21,
    name: 'webhook endpoints and outbox',
    // Messages are written in the transaction of the change that causes them (the outbox); one delivery
    // row per subscribed endpoint carries the attempts and the lease of the node sending it.
    sql: `
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  description TEXT NOT NULL,
  events TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  disabled_reason TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_until_ms BIGINT,
  failing_since_ms BIGINT,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id);
CREATE TABLE webhook_messages (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  event_id TEXT,
  user_id TEXT,
  email_hash TEXT,
  ip_hash TEXT,
  device_id TEXT,
  created_ms BIGINT NOT NULL
);
CREATE INDEX webhook_messages_tenant ON webhook_messages (tenant_id, created_ms);
CREATE INDEX webhook_messages_age ON webhook_messages (created_ms);
CREATE TABLE webhook_deliveries (
  id {{SERIAL_PK}},
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  message_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_ms BIGINT NOT NULL,
  lease_holder TEXT,
  lease_until_ms BIGINT,
  last_status INTEGER,
  last_error TEXT,
  last_attempt_ms BIGINT,
  delivered_ms BIGINT,
  created_ms BIGINT NOT NULL,
  UNIQUE (message_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_ms);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_ms);
`,
  },
  {
    version: 22,
    name: 'key last use and rotation',
    // last_used_ms is written at most once a minute per key and node (services/access/auth.ts).
    sql: `
ALTER TABLE api_keys ADD COLUMN last_used_ms BIGINT;
ALTER TABLE api_keys ADD COLUMN replaced_by TEXT;
`,
  },
  {
    version: 23,
    name: 'list entry expiry and notes',
    // The purge job reads entries by expiry; entries without one are not in the index.
    sql: `
ALTER TABLE list_entries ADD COLUMN expires_ms BIGINT;
ALTER TABLE list_entries ADD COLUMN note TEXT;
CREATE INDEX list_entries_expiry ON list_entries (expires_ms) WHERE expires_ms IS NOT NULL;
`,
  },
  {
    version: 24,
    name: 'console emails unique per tenant (PostgreSQL)',
    only: 'postgres',
    // One email may be a console user of several tenants: nothing tells one tenant of another's users.
    sql: `
ALTER TABLE console_users DROP CONSTRAINT IF EXISTS console_users_email_key;
CREATE UNIQUE INDEX console_users_tenant_email ON console_users (tenant_id, email);
CREATE INDEX console_users_email ON console_users (email);
`,
  },
  {
    version: 25,
    name: 'console emails unique per tenant (SQLite)',
    only: 'sqlite',
    // SQLite cannot drop a column's UNIQUE: the table is rebuilt. Dropping the old table deletes the
    // console sessions (their foreign key cascades), so users sign in once more after this upgrade.
    sql: `
CREATE TABLE console_users_new (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  UNIQUE (tenant_id, email)
);
INSERT INTO console_users_new (id, tenant_id, email, password_hash, created_ms)
  SELECT id, tenant_id, email, password_hash, created_ms FROM console_users;
DROP TABLE console_users;
ALTER TABLE console_users_new RENAME TO console_users;
CREATE INDEX console_users_tenant ON console_users (tenant_id);
CREATE INDEX console_users_email ON console_users (email);
`,
  },
  {
    version: 26,
    name: 'IPv6 velocity by /64',
    // The keyed hash of an IPv6 address's /64 (null for IPv4): velocity counts a subscriber's block, and
    // erasure re-derives the block's pairs from the events that remain. No index: the re-derivation
    // reads an account's events through the user index.
    sql: `
ALTER TABLE events ADD COLUMN ip_block_hash TEXT;
`,
  },
  {
    version: 27,
    name: 'list entries: IP ranges (CIDR) and phones',
    // A range is listed under the keyed hash of its network and length; its version and length say
    // which prefixes of a scored address to hash and look up (one lookup per length, never a scan).
    sql: `
ALTER TABLE list_entries ADD COLUMN ip_version INTEGER;
ALTER TABLE list_entries ADD COLUMN prefix_len INTEGER;
`,
  },
  {
    version: 28,
    name: 'hashed and counted event attributes',
    // The tenant's attribute declarations sit beside its rules. Counted attributes keep one row per
    // (tenant, attribute, keyed hash of the value, account) with its last time, trimmed after 24 hours,
    // and one row per (tenant, attribute, value hash, minute) of events: the windows are sums.
    sql: `
ALTER TABLE tenant_rules ADD COLUMN attributes TEXT;
CREATE TABLE attribute_accounts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  attribute TEXT NOT NULL,
  value_hash TEXT NOT NULL,
  account TEXT NOT NULL,
  last_ms BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, attribute, value_hash, account)
);
CREATE INDEX attribute_accounts_last ON attribute_accounts (last_ms);
CREATE TABLE attribute_events (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  attribute TEXT NOT NULL,
  value_hash TEXT NOT NULL,
  minute_ms BIGINT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, attribute, value_hash, minute_ms)
);
CREATE INDEX attribute_events_minute ON attribute_events (minute_ms);
`,
  },
  {
    version: 29,
    name: 'fewer index pages per scored event',
    // Each index entry an event adds is a random leaf page its commit writes (and the checkpoint writes
    // again). The email index carries the account, so counting a mailbox's accounts reads the index
    // alone; phones are rare, so only events with one are in the phone index; velocity reads the IP's
    // primary-key range (a few rows: the pairs of the last hour) instead of a second index moved by
    // every event; an observation's resolved identity equals its token identity since version 9, so only
    // older rows, where they differ, stay in the resolved index (queries read the token index for the rest).
    sql: `
DROP INDEX events_email;
CREATE INDEX events_email ON events (tenant_id, email_hash, user_id) WHERE email_hash IS NOT NULL;
DROP INDEX events_phone;
CREATE INDEX events_phone ON events (tenant_id, phone_hash) WHERE phone_hash IS NOT NULL;
DROP INDEX ip_accounts_recent;
DROP INDEX device_obs_resolved;
CREATE INDEX device_obs_resolved ON device_observations (tenant_id, resolved_id, created_ms) WHERE resolved_id <> token_id;
`,
  },
  {
    version: 30,
    name: 'beacon watch sessions',
    // A watch-mode beacon joins a score's device timeline only through its session: the first visit of
    // the page, which only the page and the tenant's backend know (docs/security.md). Rows from before
    // have none and join no timeline; they age out of the 24-hour timeline window.
    sql: `
ALTER TABLE beacon_observations ADD COLUMN session_id TEXT;
CREATE INDEX beacon_obs_session ON beacon_observations (tenant_id, session_id, created_ms);
`,
  },
  {
    version: 31,
    name: 'events with shadow rule hits',
    // Rule performance counts shadow hits from the events that recorded one: a partial index holds only
    // those (few: shadow rules are trials), so the report reads them without scanning the window.
    sql: `
CREATE INDEX events_shadow ON events (tenant_id, created_ms, id) WHERE shadow_rules IS NOT NULL;
`,
  },
  {
    version: 32,
    name: 'account history from the user index alone',
    // Every score of an existing account reads its earlier allowed events (takeover): their times,
    // devices and countries. With them in the user index the read is one range of the index, the
    // account's allowed events in time order, instead of a table row fetched per event of the account
    // (three times quicker at about 8 events per account, measured). The index still leads with tenant
    // and account, so export, erasure and the listing's account filter use it as before.
    sql: `
DROP INDEX events_user;
CREATE INDEX events_user ON events (tenant_id, user_id, verdict, created_ms, ip_country, device_id, resolved_device_id);
`,
  },
  {
    version: 33,
    name: 'webhook messages about a phone',
    // A phone list entry's message names the phone by its keyed hash: erasure of that phone finds the
    // message through this column, as it finds an email's or an address's (earlier rows have none).
    sql: `
ALTER TABLE webhook_messages ADD COLUMN phone_hash TEXT;
`,
  },
  {
    version: 34,
    name: 'no tenant foreign keys on the scoring tables (PostgreSQL)',
    // Their check locked the tenant row once per inserted row; a group now locks it once per tenant
    // (schema/tenant-keys.ts says what keeps a deleted tenant's rows from staying behind).
    sql: DROP_TENANT_KEYS,
    only: 'postgres',
  },
  {
    version: 35,
    name: 'the time a tenant sent its first beacon',
    // A tenant that never sent a beacon has none for a score to bind: its scores skip the beacon reads
    // (store/devices/beacons.ts). Set by the first beacon and never cleared, so a process that read
    // "none" can only be out of date until that first beacon's invalidation reaches it.
    sql: `
ALTER TABLE tenants ADD COLUMN first_beacon_ms BIGINT;
UPDATE tenants SET first_beacon_ms = (SELECT MIN(created_ms) FROM beacon_observations b WHERE b.tenant_id = tenants.id);
`,
  },
  {
    version: 36,
    name: 'a meter write that fails when the quota was overtaken (PostgreSQL)',
    // A scoring group's end (its meter and counters) goes out in one message with its COMMIT. A guarded
    // upsert that changes nothing would let that COMMIT pass a group over quota; its guard calls this
    // instead, which fails the statement and so the transaction (store/access/usage.ts meterOrFail).
    sql: `
CREATE FUNCTION quota_overtaken(tenant TEXT, month TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the monthly quota of % for % was taken meanwhile', tenant, month USING ERRCODE = 'VQ001';
END
$$;
`,
    only: 'postgres',
  },
]
