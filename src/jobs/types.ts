import type { Intel } from '../intel/index.js'
import type { Ja4Signatures } from '../services/devices/ja4-signatures.js'
import type { AsnRates } from '../services/network/asn-rates.js'
import type { Store } from '../store/index.js'
import type { Clock } from '../util/clock.js'

/** The part of the logger jobs use (Fastify's pino logger fits). */
export interface JobLog {
  info(msg: string): void
  warn(obj: Record<string, unknown>, msg: string): void
}

/** What a job may touch: the process's shared parts, built once by server.ts. */
export interface JobContext {
  store: Store
  clock: Clock
  intel: Intel
  /** The in-memory ASN fraud rates the scoring path reads. */
  asnRates: AsnRates
  /** The in-memory JA4 spoofing signatures the scoring path reads. */
  ja4Signatures: Ja4Signatures
  log: JobLog
}

/**
 * One background job. `node` jobs refresh this process's memory, so every process runs them; `cluster`
 * jobs change shared storage, so with several processes only the holder of the job's lease runs them.
 */
export interface Job {
  name: string
  scope: 'node' | 'cluster'
  /** What the job reads, and what it writes: the documentation of its effects. */
  reads: string
  writes: string
  intervalMs: number
  /** Delay of the first run after start; the interval by default. */
  firstRunMs?: number
  /** One run. A failure is logged by the scheduler and the job runs again at its next interval. */
  run(ctx: JobContext): Promise<void>
}

/**
 * Who may run a `cluster` job now. The scheduler asks before every run of such a job and releases
 * what it holds when it stops; a lease that another process holds makes this process skip the run.
 */
export interface JobLease {
  /** True when this process holds `name` for the next `ttlMs` (taken now or renewed), else false. */
  acquire(name: string, ttlMs: number): Promise<boolean>
  /** Gives `name` up so that another process can take it at once. */
  release(name: string): Promise<void>
}
