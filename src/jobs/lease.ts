import type { JobLease } from './types.js'

/** One process: it always holds every lease. A cluster-wide lease replaces this (issue 13). */
export const localLease: JobLease = {
  acquire: async () => true,
  release: async () => {},
}

/**
 * Several processes on one database: the lease is a row in `job_leases` (store/engine/leases.ts), taken when
 * free or expired and renewed by its holder. A holder that dies stops renewing; another process takes
 * the job over once the lease expires.
 */
export function storeLease(
  leases: {
    acquire(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean>
    release(name: string, holder: string): Promise<void>
  },
  holder: string,
  now: () => number,
): JobLease {
  return {
    acquire: (name, ttlMs) => leases.acquire(name, holder, now(), ttlMs),
    release: (name) => leases.release(name, holder),
  }
}
