import pg from 'pg'
import { q, type Work } from './db.js'

/**
 * What a cached read depends on: `keys` (API keys and tenant settings), `lists:<tenant>`,
 * `config:<tenant>`, `suppressions:<tenant>`, `beacons:<tenant>` (whether it ever sent a beacon),
 * `webhooks:<tenant>` (the event types its endpoints subscribe to), `flags` (the shared network),
 * `traps`, or `*` (all).
 */
export type Topic = string

/**
 * The one interface through which cached state is invalidated. Writers announce a topic; every cache
 * that depends on it drops its copy. Locally this is immediate; other processes learn of it through
 * the engine's channel (SQLite: `PRAGMA data_version`; PostgreSQL: LISTEN/NOTIFY). While the channel is
 * down (`healthy` false) caches must not serve from memory.
 */
export class Invalidation {
  private readonly listeners = new Set<(topic: Topic) => void>()
  healthy = true
  /**
   * Set by the engine: SQLite compares data_version (another process committed: drop everything).
   * Called once at the start of each request, so a change made by a CLI command applies to the next one.
   */
  poll: () => void = () => {}
  notify: ((topic: Topic) => Work<void>) | null = null

  subscribe(fn: (topic: Topic) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Drops the dependent caches of this process now. */
  publishLocal(topic: Topic): void {
    for (const fn of this.listeners) fn(topic)
  }

  /**
   * Yielded by a writing unit of work: drops this process's caches and tells the other processes.
   * On PostgreSQL the NOTIFY is delivered at COMMIT, to this process too, so a cache reloaded from the
   * not-yet-committed state is dropped again once the write is visible.
   */
  *touch(topic: Topic): Work<void> {
    this.publishLocal(topic)
    if (this.notify) yield* this.notify(topic)
  }

  /** The connection to the other processes was lost or came back: either way nothing cached is trusted. */
  setHealthy(ok: boolean): void {
    this.healthy = ok
    this.publishLocal('*')
  }
}

/** PostgreSQL channel name, one per schema so deployments (and test schemas) sharing a database stay apart. */
const channelFor = (schema: string | undefined) => `verdict_inv_${schema ?? 'public'}`

/** PostgreSQL: every writing transaction NOTIFYs its topics; delivered to the listeners at COMMIT. */
export function postgresNotify(inv: Invalidation, schema: string | undefined): void {
  const channel = channelFor(schema)
  inv.notify = function* (topic) {
    yield* q.get('SELECT pg_notify(?, ?) AS ok', [channel, topic])
  }
}

/** PostgreSQL: LISTEN on a dedicated connection that reconnects; caches are off while it is down. */
export function postgresListen(
  inv: Invalidation,
  url: string,
  schema: string | undefined,
): () => Promise<void> {
  const channel = channelFor(schema)
  let client: pg.Client | null = null
  let closed = false
  let retry: NodeJS.Timeout | null = null
  const connect = async (): Promise<void> => {
    if (closed) return
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
    const lost = () => {
      if (client !== c) return
      client = null
      inv.setHealthy(false)
      if (!closed) retry = setTimeout(() => void connect(), 500)
    }
    c.on('error', lost)
    c.on('end', lost)
    c.on('notification', (m) => {
      if (m.channel === channel && m.payload) inv.publishLocal(m.payload)
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${channel}`)
      client = c
      if (closed) {
        await c.end()
        return
      }
      inv.setHealthy(true)
    } catch {
      await c.end().catch(() => {})
      inv.setHealthy(false)
      if (!closed) retry = setTimeout(() => void connect(), 500)
    }
  }
  inv.healthy = false
  void connect()
  return async () => {
    closed = true
    if (retry) clearTimeout(retry)
    const c = client
    client = null
    await c?.end().catch(() => {})
  }
}

/**
 * A read-through cache whose entries are dropped by invalidation topics. A load that raced with an
 * invalidation is returned but not kept, and nothing is kept while the channel is down; neither is an
 * `undefined` result. Concurrent misses of one key share one load (a new API key's first requests, a
 * batch's rows), unless an invalidation came between: then the later caller loads afresh.
 */
export class Cached<K, V> {
  private readonly map = new Map<K, V>()
  private readonly loading = new Map<K, { generation: number; value: Promise<V> }>()
  private generation = 0

  constructor(
    private readonly inv: Invalidation,
    /** Which keys a topic drops: `'all'` for every key, a key, or null for none. */
    private readonly dropped: (topic: Topic) => K | 'all' | null,
    private readonly maxEntries = 10_000,
  ) {
    inv.subscribe((topic) => {
      const d = this.dropped(topic)
      if (d === null) return
      this.generation++
      if (d === 'all') this.map.clear()
      else this.map.delete(d)
    })
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    const hit = this.map.get(key)
    if (hit !== undefined && this.inv.healthy) return Promise.resolve(hit)
    const generation = this.generation
    const pending = this.loading.get(key)
    if (pending !== undefined && pending.generation === generation) return pending.value
    const entry = {
      generation,
      // A load that throws at once rejects like one that fails later.
      value: new Promise<V>((resolve) => resolve(load()))
        .then((value) => {
          if (value !== undefined && this.inv.healthy && generation === this.generation) {
            if (this.map.size >= this.maxEntries) this.map.clear()
            this.map.set(key, value)
          }
          return value
        })
        .finally(() => {
          if (this.loading.get(key) === entry) this.loading.delete(key)
        }),
    }
    this.loading.set(key, entry)
    return entry.value
  }
}

/** Drops a tenant-scoped cache's entry for `scope:<tenant>`, everything for `*`. */
export const tenantScoped =
  (scope: string) =>
  (topic: Topic): string | 'all' | null => {
    if (topic === '*') return 'all'
    return topic.startsWith(`${scope}:`) ? topic.slice(scope.length + 1) : null
  }

/** A deployment-wide cache (one key) dropped by its topic or `*`. */
export const globalScoped =
  (scope: string) =>
  (topic: Topic): 'all' | null =>
    topic === '*' || topic === scope ? 'all' : null
