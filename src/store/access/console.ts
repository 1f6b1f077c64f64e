import { observationsResolvedTo } from '../devices/devices.js'
import type { Db } from '../engine/db.js'
import { EVENT_COLUMNS, type EventRow, toEventRecord } from '../events/events.js'

/** A person who signs in to the console; belongs to one tenant. Emails are unique deployment-wide. */
export interface ConsoleUser {
  id: string
  tenantId: string
  email: string
  createdMs: number
}

export interface ConsoleUserWithHash extends ConsoleUser {
  passwordHash: string
}

/** A signed-in browser. Only a hash of the session id is stored. */
export interface ConsoleSession {
  idHash: string
  userId: string
  tenantId: string
  createdMs: number
  lastMs: number
  email: string
}

interface UserRow {
  id: string
  tenant_id: string
  email: string
  password_hash: string
  created_ms: number
}

interface SessionRow {
  id_hash: string
  user_id: string
  tenant_id: string
  created_ms: number
  last_ms: number
  email: string
}

const toUser = (r: UserRow): ConsoleUserWithHash => ({
  id: r.id,
  tenantId: r.tenant_id,
  email: r.email,
  passwordHash: r.password_hash,
  createdMs: Number(r.created_ms),
})

const isUniqueViolation = (err: unknown) => {
  const e = err as { code?: string; message?: string }
  return (
    e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  )
}

export class ConsoleStore {
  constructor(private readonly db: Db) {}

  /** false when the email is already a console user of this tenant. */
  async createUser(u: ConsoleUser, passwordHash: string): Promise<boolean> {
    try {
      await this.db.run(
        'INSERT INTO console_users (id, tenant_id, email, password_hash, created_ms) VALUES (?, ?, ?, ?, ?)',
        [u.id, u.tenantId, u.email, passwordHash, u.createdMs],
      )
      return true
    } catch (err) {
      if (isUniqueViolation(err)) return false
      throw err
    }
  }

  /** The console users with this email: one per tenant it belongs to (at most `limit`). */
  async usersByEmail(email: string, limit = 10): Promise<ConsoleUserWithHash[]> {
    const rows = await this.db.all<UserRow>(
      `SELECT id, tenant_id, email, password_hash, created_ms FROM console_users WHERE email = ?
        ORDER BY created_ms, id LIMIT ?`,
      [email, limit],
    )
    return rows.map(toUser)
  }

  /** A new hash of the same password (a higher cost, on sign-in). */
  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.db.run('UPDATE console_users SET password_hash = ? WHERE id = ?', [passwordHash, userId])
  }

  /** Every user, or one tenant's; never the password hashes. */
  async listUsers(tenantId?: string): Promise<ConsoleUser[]> {
    const rows = await this.db.all<UserRow>(
      `SELECT id, tenant_id, email, password_hash, created_ms FROM console_users
        ${tenantId === undefined ? '' : 'WHERE tenant_id = ?'} ORDER BY created_ms, id`,
      tenantId === undefined ? [] : [tenantId],
    )
    return rows.map(({ id, tenant_id, email, created_ms }) => ({
      id,
      tenantId: tenant_id,
      email,
      createdMs: Number(created_ms),
    }))
  }

  /**
   * Deletes the user by id, or by email (of one tenant when given, else of every tenant that has it);
   * their sessions cascade. Returns how many users went.
   */
  async deleteUser(idOrEmail: string, tenantId?: string): Promise<number> {
    const which =
      tenantId === undefined
        ? { sql: 'id = ? OR email = ?', params: [idOrEmail, idOrEmail] }
        : { sql: 'tenant_id = ? AND (id = ? OR email = ?)', params: [tenantId, idOrEmail, idOrEmail] }
    await this.db.run(
      `DELETE FROM console_sessions WHERE user_id IN (SELECT id FROM console_users WHERE ${which.sql})`,
      which.params,
    )
    return this.db.run(`DELETE FROM console_users WHERE ${which.sql}`, which.params)
  }

  async createSession(s: Omit<ConsoleSession, 'email'>): Promise<void> {
    await this.db.run(
      'INSERT INTO console_sessions (id_hash, user_id, tenant_id, created_ms, last_ms) VALUES (?, ?, ?, ?, ?)',
      [s.idHash, s.userId, s.tenantId, s.createdMs, s.lastMs],
    )
  }

  async session(idHash: string): Promise<ConsoleSession | undefined> {
    const r = await this.db.get<SessionRow>(
      `SELECT s.id_hash, s.user_id, s.tenant_id, s.created_ms, s.last_ms, u.email
         FROM console_sessions s JOIN console_users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id
        WHERE s.id_hash = ?`,
      [idHash],
    )
    return r
      ? {
          idHash: r.id_hash,
          userId: r.user_id,
          tenantId: r.tenant_id,
          createdMs: Number(r.created_ms),
          lastMs: Number(r.last_ms),
          email: r.email,
        }
      : undefined
  }

  async touchSession(idHash: string, nowMs: number): Promise<void> {
    await this.db.run('UPDATE console_sessions SET last_ms = ? WHERE id_hash = ?', [nowMs, idHash])
  }

  async deleteSession(idHash: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM console_sessions WHERE id_hash = ?', [idHash])) > 0
  }

  /** Drops sessions idle since before `idleBeforeMs` or created before `createdBeforeMs`. */
  async expireSessions(idleBeforeMs: number, createdBeforeMs: number): Promise<number> {
    return this.db.run('DELETE FROM console_sessions WHERE last_ms < ? OR created_ms < ?', [
      idleBeforeMs,
      createdBeforeMs,
    ])
  }
}

/** Reads over other tables that only the console needs; every query is filtered by tenant. */
export class ConsoleReads {
  constructor(private readonly db: Db) {}

  async eventLabels(tenantId: string, eventId: string) {
    const rows = await this.db.all<{ id: number; label: string; note: string | null; created_ms: number }>(
      'SELECT id, label, note, created_ms FROM labels WHERE tenant_id = ? AND event_id = ? ORDER BY created_ms, id',
      [tenantId, eventId],
    )
    return rows.map((r) => ({
      id: Number(r.id),
      label: r.label,
      note: r.note,
      createdMs: Number(r.created_ms),
    }))
  }

  /** Events with verdict review and no label yet, oldest first. */
  async reviewQueue(tenantId: string, limit: number) {
    const queued = `FROM events e WHERE e.tenant_id = ? AND e.verdict = 'review'
      AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.tenant_id = e.tenant_id AND l.event_id = e.id)`
    const rows = await this.db.all<EventRow>(
      `SELECT ${EVENT_COLUMNS} ${queued} ORDER BY e.created_ms, e.id LIMIT ?`,
      [tenantId, limit],
    )
    const total = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n ${queued}`, [tenantId])
    return { events: rows.map(toEventRecord), total: Number(total?.n ?? 0) }
  }

  /**
   * What is held about one resolved device of the tenant: when it was first and last seen, how many
   * scores carried it from how many addresses, accounts and countries, and what its browser reported in
   * the latest beacon of its fingerprint.
   */
  async deviceProfile(tenantId: string, resolvedId: string, deviceId: string | null) {
    const r = await this.db.get<{
      f: number
      l: number
      n: number
      ips: number
      accounts: number
      countries: number
    }>(
      `SELECT MIN(created_ms) AS f, MAX(created_ms) AS l, COUNT(*) AS n, COUNT(DISTINCT ip_hash) AS ips,
              COUNT(DISTINCT user_id) AS accounts, COUNT(DISTINCT country) AS countries
         FROM (${observationsResolvedTo('created_ms, ip_hash, user_id, country')}) AS o`,
      [tenantId, resolvedId, tenantId, resolvedId],
    )
    const b = deviceId
      ? await this.db.get<{ os: string | null; browser: string | null; mobile: number; created_ms: number }>(
          `SELECT os, browser, mobile, created_ms FROM beacon_observations
            WHERE tenant_id = ? AND device_id = ? ORDER BY created_ms DESC LIMIT 1`,
          [tenantId, deviceId],
        )
      : undefined
    return {
      firstSeenMs: r?.f === null || r?.f === undefined ? null : Number(r.f),
      lastSeenMs: r?.l === null || r?.l === undefined ? null : Number(r.l),
      observations: Number(r?.n ?? 0),
      distinctIps: Number(r?.ips ?? 0),
      accounts: Number(r?.accounts ?? 0),
      countries: Number(r?.countries ?? 0),
      browser: b
        ? { os: b.os, browser: b.browser, mobile: Number(b.mobile) === 1, seenMs: Number(b.created_ms) }
        : null,
    }
  }

  /** Events per hour and verdict over [sinceMs, untilMs), from the hourly rollup. */
  async hourly(tenantId: string, sinceMs: number, untilMs: number) {
    const rows = await this.db.all<{ hour_ms: number; verdict: string; n: number }>(
      `SELECT hour_ms, verdict, SUM(n) AS n FROM event_rollup
        WHERE tenant_id = ? AND reason = '' AND hour_ms >= ? AND hour_ms < ?
        GROUP BY hour_ms, verdict ORDER BY hour_ms`,
      [tenantId, sinceMs, untilMs],
    )
    return rows.map((r) => ({ hourMs: Number(r.hour_ms), verdict: r.verdict, count: Number(r.n) }))
  }
}
