import type { Db, Dialect } from './db.js'

/**
 * Schema migrations. One text serves both engines; the few spots where the dialects differ are
 * written as tokens replaced per dialect.
 */
const TOKENS: Record<Dialect, Record<string, string>> = {
  sqlite: { '{{SERIAL_PK}}': 'INTEGER PRIMARY KEY AUTOINCREMENT', '{{REAL}}': 'REAL' },
  postgres: {
    '{{SERIAL_PK}}': 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
    '{{REAL}}': 'DOUBLE PRECISION',
  },
}

export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
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
]

function render(sql: string, dialect: Dialect): string {
  let out = sql
  for (const [token, value] of Object.entries(TOKENS[dialect])) out = out.replaceAll(token, value)
  return out
}

export async function migrate(db: Db): Promise<void> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)',
  )
  const done = new Set(
    (await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) =>
      Number(r.version),
    ),
  )
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue
    try {
      await db.exec(
        `BEGIN;\n${render(m.sql, db.dialect)}\nINSERT INTO schema_migrations (version, applied_ms) VALUES (${m.version}, ${Date.now()});\nCOMMIT;`,
      )
    } catch (err) {
      await db.exec('ROLLBACK').catch(() => {})
      throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`)
    }
  }
}
