import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteDb } from '../../src/store/engine/sqlite.js'
import { migrate } from '../../src/store/schema/migrations.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { CONSOLE_PASSWORD, consoleSession } from '../helpers/console.js'
import { pgAvailable } from '../helpers/pg.js'

/**
 * Issue 26, item 6: console emails are unique per tenant, so adding one tells a tenant nothing about
 * another's users, and nobody can squat an email another tenant will need. Sign-in picks the account by
 * its password, and by `tenant` when the same password opens several.
 */
const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])('console emails of several tenants on %s', (engine) => {
  let h: Harness | undefined
  afterEach(async () => {
    await h?.close()
    h = undefined
  })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('another tenant may add an email this tenant uses; the answer names nothing of the other', async () => {
    h = await build({ engine })
    const a = await h.tenant()
    const b = await h.tenant()
    const inA = await consoleSession(h, a, 'someone-in-a@example.com')
    const inB = await consoleSession(h, b, 'someone-in-b@example.com')
    const add = (email: string, password = 'a long enough password') =>
      h!.app.inject({
        method: 'POST',
        url: '/console/api/users',
        headers: inB.write,
        payload: { email, password },
      })
    const other = await add(inA.email)
    expect(other.statusCode).toBe(200)
    expect(other.json()).toMatchObject({ tenantId: b.tenantId, email: inA.email })
    expect(other.body).not.toContain(a.tenantId)
    // Only an email of this very tenant is taken.
    const own = await add(inB.email)
    expect(own.statusCode).toBe(409)
    expect(own.body).not.toContain(a.tenantId)
    expect((await h.store.console.listUsers(a.tenantId)).map((u) => u.email)).toEqual([inA.email])
  })

  run(
    'sign-in takes the account whose password matches; the same password in two tenants needs tenant',
    async () => {
      h = await build({ engine })
      const a = await h.tenant()
      const b = await h.tenant()
      await consoleSession(h, a, 'shared@example.com')
      const signIn = (payload: object) =>
        h!.app.inject({ method: 'POST', url: '/console/api/sign-in', payload })
      const sessionTenant = async (res: Awaited<ReturnType<typeof signIn>>) => {
        const cookie = String(res.headers['set-cookie']).split(';')[0]!
        return (await h!.app.inject({ url: '/console/api/session', headers: { cookie } })).json().tenantId
      }
      // Tenant B's user with the same email and another password.
      const inB = await consoleSession(h, b, 'admin-b@example.com')
      await h.app.inject({
        method: 'POST',
        url: '/console/api/users',
        headers: inB.write,
        payload: { email: 'shared@example.com', password: 'the password of b' },
      })
      const toA = await signIn({ email: 'shared@example.com', password: CONSOLE_PASSWORD })
      expect(toA.statusCode).toBe(200)
      expect(await sessionTenant(toA)).toBe(a.tenantId)
      const toB = await signIn({ email: 'shared@example.com', password: 'the password of b' })
      expect(toB.statusCode).toBe(200)
      expect(await sessionTenant(toB)).toBe(b.tenantId)
      expect((await signIn({ email: 'shared@example.com', password: 'wrong password!' })).statusCode).toBe(
        401,
      )

      // A third tenant with the same email and tenant A's password: the password opens two accounts.
      const c = await h.tenant()
      const inC = await consoleSession(h, c, 'admin-c@example.com')
      await h.app.inject({
        method: 'POST',
        url: '/console/api/users',
        headers: inC.write,
        payload: { email: 'shared@example.com', password: CONSOLE_PASSWORD },
      })
      const both = await signIn({ email: 'shared@example.com', password: CONSOLE_PASSWORD })
      expect(both.statusCode).toBe(409)
      expect(both.json().error).toContain(a.tenantId)
      expect(both.json().error).toContain(c.tenantId)
      expect(both.json().error).not.toContain(b.tenantId)
      const chosen = await signIn({
        email: 'shared@example.com',
        password: CONSOLE_PASSWORD,
        tenant: c.tenantId,
      })
      expect(chosen.statusCode).toBe(200)
      expect(await sessionTenant(chosen)).toBe(c.tenantId)
    },
  )
})

describe('the SQLite upgrade to per-tenant console emails', () => {
  it('keeps every user, and then lets two tenants share an email', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-console-emails-'))
    const db = new SqliteDb(join(dir, 'verdict.db'))
    try {
      await migrate(db, { until: 23 })
      for (const t of ['t1', 't2'])
        await db.run(
          'INSERT INTO tenants (id, name, share_network, rate_limit, monthly_quota, created_ms) VALUES (?, ?, 0, 10, 10, 0)',
          [t, t],
        )
      await db.run(
        "INSERT INTO console_users (id, tenant_id, email, password_hash, created_ms) VALUES ('u1', 't1', 'x@example.com', 'h', 1)",
      )
      await expect(
        db.run(
          "INSERT INTO console_users (id, tenant_id, email, password_hash, created_ms) VALUES ('u2', 't2', 'x@example.com', 'h', 2)",
        ),
      ).rejects.toThrow(/UNIQUE/)
      await migrate(db)
      expect(await db.all('SELECT id, tenant_id, email FROM console_users')).toEqual([
        { id: 'u1', tenant_id: 't1', email: 'x@example.com' },
      ])
      await db.run(
        "INSERT INTO console_users (id, tenant_id, email, password_hash, created_ms) VALUES ('u2', 't2', 'x@example.com', 'h', 2)",
      )
      await expect(
        db.run(
          "INSERT INTO console_users (id, tenant_id, email, password_hash, created_ms) VALUES ('u3', 't2', 'x@example.com', 'h', 3)",
        ),
      ).rejects.toThrow(/UNIQUE/)
      // Sessions still cascade from the rebuilt table.
      await db.run(
        "INSERT INTO console_sessions (id_hash, user_id, tenant_id, created_ms, last_ms) VALUES ('s', 'u2', 't2', 1, 1)",
      )
      await db.run("DELETE FROM console_users WHERE id = 'u2'")
      expect(await db.all('SELECT * FROM console_sessions')).toEqual([])
    } finally {
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
