import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { firstStartKey, runCli, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-cli-'))
const env = { DATABASE_URL: `sqlite:${join(dir, 'verdict.db')}` }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const json = (out: string) => {
  const lines = out.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

describe('verdict CLI and first start', () => {
  it('first start creates tenant default and shows its api_key once; the key reads /v1/config', async () => {
    const server = await startServer(env)
    try {
      const apiKey = firstStartKey(server.stderr())!
      expect(apiKey).toMatch(/^vk_[A-Za-z0-9]{40}$/)
      const res = await fetch(`${server.url}/v1/config`, { headers: { 'x-api-key': apiKey } })
      expect(res.status).toBe(200)
      expect(
        ((await res.json()) as { effective: { thresholds: { block: number } } }).effective.thresholds.block,
      ).toBe(70)
    } finally {
      await server.stop()
    }
    // The secret was generated once and kept beside the database, readable only by its owner.
    expect(statSync(join(dir, 'verdict.secret')).mode & 0o777).toBe(0o600)
    const again = await startServer(env)
    await again.stop()
    expect(firstStartKey(again.logs())).toBeUndefined()
  })

  it('tenants create prints exactly one JSON object with a working key; list, delete', async () => {
    const created = runCli(
      [
        'tenants',
        'create',
        '--name',
        'acme',
        '--share-network',
        '--rate-limit',
        '5',
        '--monthly-quota',
        '99',
      ],
      env,
    )
    expect(created.status).toBe(0)
    const t = json(created.stdout)
    expect(Object.keys(t).sort()).toEqual(['apiKey', 'keyId', 'tenantId'])
    const listed = json(runCli(['tenants', 'list'], env).stdout)
    const acme = listed.tenants.find((x: { id: string }) => x.id === t.tenantId)
    expect(acme).toMatchObject({ name: 'acme', shareNetwork: true, rateLimit: 5, monthlyQuota: 99 })
    const server = await startServer(env)
    try {
      const res = await fetch(`${server.url}/v1/config`, { headers: { authorization: `Bearer ${t.apiKey}` } })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('5')
    } finally {
      await server.stop()
    }
    expect(json(runCli(['tenants', 'delete', t.tenantId], env).stdout)).toEqual({ deleted: t.tenantId })
    const gone = runCli(['tenants', 'delete', t.tenantId], env)
    expect(gone.status).toBe(1)
    expect(gone.stdout).toBe('')
    expect(JSON.parse(gone.stderr.split('\n')[0]!).error).toContain('not found')
  })

  it('keys create, rotate and revoke; old keys answer 401', async () => {
    const t = json(runCli(['tenants', 'create', '--name', 'keys'], env).stdout)
    const k2 = json(runCli(['keys', 'create', '--tenant', t.tenantId], env).stdout)
    expect(k2).toMatchObject({ tenantId: t.tenantId })
    const rotated = json(runCli(['keys', 'rotate', k2.keyId], env).stdout)
    expect(rotated.rotatedKeyId).toBe(k2.keyId)
    const revokeTarget = json(runCli(['keys', 'create', '--tenant', t.tenantId], env).stdout)
    expect(json(runCli(['keys', 'revoke', revokeTarget.keyId], env).stdout)).toEqual({
      keyId: revokeTarget.keyId,
      revoked: true,
    })
    const server = await startServer(env)
    try {
      const status = async (key: string) =>
        (await fetch(`${server.url}/v1/lists`, { headers: { 'x-api-key': key } })).status
      expect(await status(t.apiKey)).toBe(200)
      expect(await status(rotated.apiKey)).toBe(200)
      expect(await status(k2.apiKey)).toBe(401)
      expect(await status(revokeTarget.apiKey)).toBe(401)
    } finally {
      await server.stop()
    }
  })

  it('reports usage errors with exit code 2 and nothing on stdout', () => {
    for (const args of [
      ['tenants', 'create'],
      ['tenants', 'create', '--name', 'x', '--rate-limit', 'abc'],
      ['bogus'],
      ['keys', 'create'],
    ]) {
      const r = runCli(args, env)
      expect(r.status, args.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/run: verdict( \w+)? --help/)
    }
    const missingTenant = runCli(['keys', 'create', '--tenant', 'tn_missing'], env)
    expect(missingTenant.status).toBe(1)
  })
})

describe('first start on PostgreSQL', async () => {
  const { pgAvailable, createSchema, PG_URL } = await import('./helpers/pg.js')
  const hasPg = await pgAvailable()
  it.skipIf(!hasPg)(
    'creates the default tenant; the secret comes from VERDICT_SECRET, never the database',
    async () => {
      const { schema, drop } = await createSchema()
      const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
      const secret = 'pg-first-start-secret-0123456789abcdef'
      try {
        const server = await startServer({ DATABASE_URL: url, VERDICT_SECRET: secret })
        const apiKey = firstStartKey(server.stderr())!
        const res = await fetch(`${server.url}/v1/health`, { headers: { 'x-api-key': apiKey } })
        expect(await res.json()).toMatchObject({
          status: 'ok',
          database: { engine: 'postgres', reachable: true },
        })
        expect((await fetch(`${server.url}/v1/config`, { headers: { 'x-api-key': apiKey } })).status).toBe(
          200,
        )
        await server.stop()
        const t = json(runCli(['tenants', 'create', '--name', 'pg'], { DATABASE_URL: url }).stdout)
        expect(t.tenantId).toMatch(/^tn_/)
        const pg = (await import('pg')).default
        const c = new pg.Client({ connectionString: PG_URL })
        await c.connect()
        const r = await c.query(`SELECT value FROM ${schema}.meta WHERE key = 'secret'`)
        await c.end()
        expect(r.rows).toEqual([])
      } finally {
        await drop()
      }
    },
  )
})
