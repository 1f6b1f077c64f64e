/** Where the process is in its life, as readiness reports it. */
export type Phase = 'starting' | 'migrating' | 'ready' | 'stopping'

/** What readiness reads from the running app (attached once the store is open). */
export interface ReadinessSources {
  /** Whether the database answers and can take a write now (`Db.ping`). */
  ping(): Promise<boolean>
  /** Whether load shedding would refuse a request now. */
  shedding(): boolean
}

export interface ReadinessReport {
  ready: boolean
  /** Why not: starting, migrating, database_unavailable, shedding or shutting_down; null when ready. */
  reason: string | null
}

/** A database that takes longer than this to answer a probe counts as unavailable. */
const PING_TIMEOUT_MS = 2000

/**
 * Readiness for load balancers and Kubernetes: ready only once the store is open and migrated, while the
 * database answers and takes writes (SQLite: no other process holds the write lock), while load
 * shedding would let a request in, and until shutdown starts. Liveness is not here: `/livez` answers
 * whenever the event loop turns.
 */
export class Readiness {
  private phase: Phase
  private sources: ReadinessSources | null = null

  constructor(phase: Phase = 'starting') {
    this.phase = phase
  }

  set(phase: Phase): void {
    this.phase = phase
  }

  private stopping(): boolean {
    return this.phase === 'stopping'
  }

  attach(sources: ReadinessSources): void {
    this.sources = sources
  }

  async check(): Promise<ReadinessReport> {
    if (this.stopping()) return { ready: false, reason: 'shutting_down' }
    if (this.phase !== 'ready' || !this.sources) return { ready: false, reason: this.phase }
    if (this.sources.shedding()) return { ready: false, reason: 'shedding' }
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)
    })
    const reachable = await Promise.race([this.sources.ping().catch(() => false), timeout])
    clearTimeout(timer)
    // Shutdown may have begun while the database was asked.
    if (this.stopping()) return { ready: false, reason: 'shutting_down' }
    return reachable ? { ready: true, reason: null } : { ready: false, reason: 'database_unavailable' }
  }
}
