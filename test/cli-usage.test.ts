import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { packageVersion } from '../src/version.js'
import { runCli, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-cli-usage-'))
const env = { DATABASE_URL: join(dir, 'verdict.db') }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('CLI help and version (item 6)', () => {
  it('--help prints the usage on stdout with exit 0; --version prints the version', () => {
    const help = runCli(['--help'], env)
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: verdict/)
    expect(help.stdout).toContain('tenants create')
    expect(help.stderr).toBe('')
    const version = runCli(['--version'], env)
    expect(version.status).toBe(0)
    expect(version.stdout.trim()).toBe(packageVersion())
  })

  it('<command> --help prints that command only; an unknown command a short hint', () => {
    const keys = runCli(['keys', '--help'], env)
    expect(keys.status).toBe(0)
    expect(keys.stdout).toContain('keys create')
    expect(keys.stdout).toContain('keys list')
    expect(keys.stdout).not.toContain('tenants create')
    const create = runCli(['tenants', 'create', '--help'], env)
    expect(create.status).toBe(0)
    expect(create.stdout).toContain('--allow-duplicate-name')
    expect(create.stdout).not.toContain('keys rotate')
    const unknown = runCli(['tenant', 'list'], env)
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toContain('unknown command: tenant')
    expect(unknown.stderr).toContain('verdict --help')
    expect(unknown.stderr).not.toContain('feeds update')
    expect(unknown.stderr.split('\n').filter(Boolean).length).toBeLessThanOrEqual(2)
  })
})

describe('keys list and tenant names (item 7)', () => {
  it('tenants create answers the key id; a duplicate name is refused unless --allow-duplicate-name', () => {
    const a = runCli(['tenants', 'create', '--name', 'shop'], env)
    expect(a.status, a.stderr).toBe(0)
    const created = JSON.parse(a.stdout)
    expect(created).toMatchObject({ tenantId: expect.any(String), keyId: expect.any(String) })
    expect(created.apiKey).toMatch(/^vk_/)
    const dup = runCli(['tenants', 'create', '--name', 'shop'], env)
    expect(dup.status).toBe(1)
    expect(JSON.parse(dup.stderr.split('\n')[0]!).error).toMatch(
      /"shop" already exists.*--allow-duplicate-name/,
    )
    const allowed = runCli(['tenants', 'create', '--name', 'shop', '--allow-duplicate-name'], env)
    expect(allowed.status).toBe(0)
  })

  it('keys list shows id, kind, prefix, created, last used and state', async () => {
    const t = JSON.parse(runCli(['tenants', 'create', '--name', 'lister'], env).stdout)
    const rotated = JSON.parse(runCli(['keys', 'rotate', t.keyId], env).stdout)
    const extra = JSON.parse(runCli(['keys', 'create', '--tenant', t.tenantId], env).stdout)
    runCli(['keys', 'revoke', extra.keyId], env)
    // The rotated-in key is used once through the real server.
    const server = await startServer(env)
    try {
      const res = await fetch(`${server.url}/v1/config`, { headers: { 'x-api-key': rotated.apiKey } })
      expect(res.status).toBe(200)
    } finally {
      await server.stop()
    }
    const r = runCli(['keys', 'list', '--tenant', t.tenantId], env)
    expect(r.status, r.stderr).toBe(0)
    const { keys } = JSON.parse(r.stdout) as { keys: Record<string, unknown>[] }
    const byId = Object.fromEntries(keys.map((k) => [k.id, k]))
    expect(Object.keys(keys[0]!).sort()).toEqual(['created', 'id', 'kind', 'lastUsed', 'prefix', 'state'])
    expect(byId[t.keyId]).toMatchObject({ kind: 'secret', state: 'rotated', lastUsed: null })
    expect(byId[rotated.keyId]).toMatchObject({ state: 'active', lastUsed: expect.any(String) })
    expect(byId[extra.keyId]).toMatchObject({ state: 'revoked' })
    expect(String(byId[t.keyId]!.prefix)).toMatch(/^vk_/)
    expect(runCli(['keys', 'list'], env).status).toBe(2)
  })
})

describe('which database (item 8)', () => {
  it('says so on stderr when a command creates a new database; --database overrides DATABASE_URL', () => {
    const fresh = join(dir, 'elsewhere', 'new.db')
    const r = runCli(['tenants', 'list', '--database', fresh], env)
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ tenants: [] })
    expect(r.stderr).toContain(`created a new database: ${fresh}`)
    expect(existsSync(fresh)).toBe(true)
    expect(existsSync(join(dir, 'elsewhere', 'verdict.db'))).toBe(false)
    // An existing database is opened without a word.
    const again = runCli(['tenants', 'list', '--database', fresh], env)
    expect(again.stderr).toBe('')
    const mine = JSON.parse(runCli(['tenants', 'list'], env).stdout)
    expect(mine.tenants.length).toBeGreaterThan(0)
  })
})
