import type { Db } from './db.js'

/**
 * Leases of background jobs in the shared database: the row names the node holding a job until a
 * time. A node takes the lease when it is free, expired or already its own (a renewal); whoever holds
 * an unexpired lease keeps it, so a job runs on one node at a time and moves to another once its holder
 * stops renewing (crashed, stopped or cut off).
 */
export class LeaseStore {
  constructor(private readonly db: Db) {}

  async acquire(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const row = await this.db.get<{ holder: string }>(
      `INSERT INTO job_leases (name, holder, expires_ms) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
       WHERE job_leases.holder = excluded.holder OR job_leases.expires_ms <= ?
       RETURNING holder`,
      [name, holder, nowMs + ttlMs, nowMs],
    )
    return row?.holder === holder
  }

  async release(name: string, holder: string): Promise<void> {
    await this.db.run('DELETE FROM job_leases WHERE name = ? AND holder = ?', [name, holder])
  }

  async holder(name: string, nowMs: number): Promise<string | null> {
    const row = await this.db.get<{ holder: string }>(
      'SELECT holder FROM job_leases WHERE name = ? AND expires_ms > ?',
      [name, nowMs],
    )
    return row?.holder ?? null
  }
}
