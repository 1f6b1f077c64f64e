import { ConfigStore } from './config.js'
import type { Db } from './db.js'
import { DeviceStore } from './devices.js'
import { EventStore } from './events.js'
import { ListStore } from './lists.js'
import { LookupStore } from './lookups.js'
import { migrate } from './migrations.js'
import { NetworkStore } from './network.js'
import { PostgresDb } from './postgres.js'
import { PrivacyStore } from './privacy.js'
import { SqliteDb } from './sqlite.js'
import { TenantStore } from './tenants.js'
import { UsageStore } from './usage.js'

export type { Db, Sql } from './db.js'

/** Every table of tenant data, behind one object; each repository scopes its queries by tenant. */
export class Store {
  readonly tenants: TenantStore
  readonly config: ConfigStore
  readonly lists: ListStore
  readonly usage: UsageStore
  readonly lookups: LookupStore
  readonly network: NetworkStore
  readonly events: EventStore
  readonly devices: DeviceStore
  readonly privacy: PrivacyStore

  constructor(readonly db: Db) {
    this.tenants = new TenantStore(db)
    this.config = new ConfigStore(db)
    this.lists = new ListStore(db)
    this.usage = new UsageStore(db)
    this.lookups = new LookupStore(db)
    this.network = new NetworkStore(db)
    this.events = new EventStore(db)
    this.privacy = new PrivacyStore(db)
    this.devices = new DeviceStore(db)
  }

  close(): Promise<void> {
    return this.db.close()
  }
}

export type StorageTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string }

/** `postgres://…` selects PostgreSQL; `sqlite:PATH` or a bare path selects SQLite. */
export function parseDatabaseUrl(url: string | undefined): StorageTarget {
  const value = url?.trim() || './data/verdict.db'
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value }
  return { kind: 'sqlite', file: value.replace(/^sqlite:(\/\/)?/i, '') }
}

export async function openStore(target: StorageTarget, options: { pgSchema?: string } = {}): Promise<Store> {
  const db: Db =
    target.kind === 'postgres'
      ? new PostgresDb(target.url, options.pgSchema ? { schema: options.pgSchema } : {})
      : new SqliteDb(target.file)
  try {
    await migrate(db)
  } catch (err) {
    await db.close().catch(() => {})
    throw err
  }
  return new Store(db)
}
