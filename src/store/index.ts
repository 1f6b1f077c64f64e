import { ConsoleReads, ConsoleStore } from './access/console.js'
import { TenantStore } from './access/tenants.js'
import { UsageStore } from './access/usage.js'
import { BeaconStore } from './devices/beacons.js'
import { DeviceStore } from './devices/devices.js'
import { Ja4Store } from './devices/ja4.js'
import type { Db } from './engine/db.js'
import { Invalidation, postgresListen, postgresNotify } from './engine/invalidation.js'
import { LeaseStore } from './engine/leases.js'
import { PostgresDb } from './engine/postgres.js'
import { SqliteDb, type SqliteOptions } from './engine/sqlite.js'
import { AttributeCountStore } from './events/attribute-counts.js'
import { DecisionStore } from './events/decisions.js'
import { EventStore } from './events/events.js'
import { IdempotencyStore } from './events/idempotency.js'
import { LookupStore } from './events/lookups.js'
import { LabelStore } from './network/labels.js'
import { NetworkStore } from './network/network.js'
import { PrivacyStore } from './privacy/privacy.js'
import { RestoreStore } from './privacy/restore.js'
import { ListStore } from './rules/lists.js'
import { RulePerformanceStore } from './rules/rule-performance.js'
import { ConfigStore } from './rules/tenant-config.js'
import { CompactionStore } from './schema/compaction.js'
import { migrate } from './schema/migrations.js'
import { PartitionStore } from './schema/partitions.js'
import { RetentionStore } from './schema/retention.js'
import { StatisticsStore } from './schema/statistics.js'
import { WebhookEndpointStore } from './webhooks/endpoints.js'
import { WebhookOutbox } from './webhooks/outbox.js'

export type { Db, Work } from './engine/db.js'
export { q } from './engine/db.js'

/** Every table of tenant data, behind one object; each repository scopes its queries by tenant. */
export class Store {
  readonly tenants: TenantStore
  readonly config: ConfigStore
  readonly lists: ListStore
  readonly usage: UsageStore
  readonly lookups: LookupStore
  readonly network: NetworkStore
  readonly labels: LabelStore
  readonly events: EventStore
  readonly attributeCounts: AttributeCountStore
  readonly devices: DeviceStore
  readonly beacons: BeaconStore
  readonly ja4: Ja4Store
  readonly privacy: PrivacyStore
  readonly leases: LeaseStore
  readonly retention: RetentionStore
  readonly compaction: CompactionStore
  readonly restore: RestoreStore
  readonly idempotency: IdempotencyStore
  readonly partitions: PartitionStore
  readonly statistics: StatisticsStore
  readonly rulePerformance: RulePerformanceStore
  readonly decisions: DecisionStore
  readonly console: ConsoleStore
  readonly consoleReads: ConsoleReads
  readonly webhookEndpoints: WebhookEndpointStore
  readonly webhookOutbox: WebhookOutbox

  constructor(
    readonly db: Db,
    readonly invalidation: Invalidation = new Invalidation(),
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    const inv = invalidation
    this.tenants = new TenantStore(db, inv)
    this.config = new ConfigStore(db, inv)
    this.lists = new ListStore(db, inv)
    this.usage = new UsageStore(db)
    this.lookups = new LookupStore(db)
    this.network = new NetworkStore(db, inv)
    this.labels = new LabelStore(db)
    this.events = new EventStore(db)
    this.attributeCounts = new AttributeCountStore(db)
    this.privacy = new PrivacyStore(db, inv)
    this.devices = new DeviceStore(db)
    this.beacons = new BeaconStore(db, inv)
    this.ja4 = new Ja4Store(db)
    this.leases = new LeaseStore(db)
    this.retention = new RetentionStore(db)
    this.compaction = new CompactionStore(db)
    this.restore = new RestoreStore(db)
    this.idempotency = new IdempotencyStore(db)
    this.partitions = new PartitionStore(db)
    this.statistics = new StatisticsStore(db)
    this.rulePerformance = new RulePerformanceStore(db)
    this.decisions = new DecisionStore(db)
    this.console = new ConsoleStore(db)
    this.consoleReads = new ConsoleReads(db)
    this.webhookEndpoints = new WebhookEndpointStore(db, inv)
    this.webhookOutbox = new WebhookOutbox(db)
  }

  async close(): Promise<void> {
    await this.onClose()
    await this.db.close()
  }
}

export type StorageTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string }

/** `postgres://…` selects PostgreSQL; `sqlite:PATH` or a bare path selects SQLite (DATABASE_URL). */
export function parseDatabaseUrl(url: string): StorageTarget {
  const value = url.trim()
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value }
  return { kind: 'sqlite', file: value.replace(/^sqlite:(\/\/)?/i, '') }
}

export interface OpenOptions {
  pgSchema?: string
  /** Executor options of the SQLite engine (busy budget, checkpointer); defaults suit the server. */
  sqlite?: SqliteOptions
  /**
   * Listen for other processes' writes (PostgreSQL LISTEN, one extra connection). Servers do; one-shot
   * CLI commands need not. SQLite always notices them through `PRAGMA data_version`.
   */
  listen?: boolean
}

export async function openStore(target: StorageTarget, options: OpenOptions = {}): Promise<Store> {
  const db: Db =
    target.kind === 'postgres'
      ? new PostgresDb(target.url, options.pgSchema ? { schema: options.pgSchema } : {})
      : new SqliteDb(target.file, options.sqlite)
  try {
    await migrate(db)
  } catch (err) {
    await db.close().catch(() => {})
    throw err
  }
  if (db.dialect === 'postgres') {
    // This month's and next month's partitions; a step that misses its lock is retried by the
    // retention job, and meanwhile rows land in the default partition.
    await new PartitionStore(db).ensure(Date.now()).catch(() => {})
  }
  const inv = new Invalidation()
  let stop = async () => {}
  if (db instanceof SqliteDb) {
    let seen = db.dataVersion()
    inv.poll = () => {
      const now = db.dataVersion()
      if (now !== seen) {
        seen = now
        inv.publishLocal('*')
      }
    }
  } else if (target.kind === 'postgres') {
    // A one-shot process that does not listen still tells the servers what it changed.
    postgresNotify(inv, options.pgSchema)
    if (options.listen === false) inv.healthy = false
    else stop = postgresListen(inv, target.url, options.pgSchema)
  }
  return new Store(db, inv, stop)
}
