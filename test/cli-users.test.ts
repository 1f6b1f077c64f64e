import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, startServer } from './helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-cli-users-'))
const env = { DATABASE_URL: `sqlite:${join(dir, 'verdict.db')}` }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** util-linux `script` gives the CLI a terminal of its own, as a person typing would. */
const SCRIPT = '/usr/bin/script'
const ROOT = join(import.meta.dirname, '..')

/** Runs `verdict args` on a pseudo-terminal, typing `answers` one per prompt as each prompt appears. */
function onTerminal(args: string[], answers: string[]): Promise<string> {
  const command = ['node', join(ROOT, 'bin', 'verdict.mjs'), ...args].map((a) => `'${a}'`).join(' ')
  const child = spawn(SCRIPT, ['-qec', command, '/dev/null'], { env: { ...process.env, ...env } })
  let out = ''
  let asked = 0
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString()
    const prompts = out.match(/password: /gi)?.length ?? 0
    while (asked < prompts && asked < answers.length) child.stdin.write(`${answers[asked++]}\r`)
  })
  return new Promise((resolve) => child.once('close', () => resolve(out)))
}

const json = (out: string) => {
  const lines = out.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

describe('verdict users', () => {
  it('creates a console user from a piped password, who can then sign in; list and delete', async () => {
    const tenant = json(runCli(['tenants', 'create', '--name', 'acme'], env).stdout)
    const made = runCli(
      ['users', 'create', '--tenant', tenant.tenantId, '--email', 'Ana@Example.com', '--password-stdin'],
      env,
      'a long console password\n',
    )
    expect(made.status, made.stderr).toBe(0)
    const user = json(made.stdout)
    expect(Object.keys(user).sort()).toEqual(['email', 'tenantId', 'userId'])
    expect(user).toMatchObject({ tenantId: tenant.tenantId, email: 'ana@example.com' })

    const taken = runCli(
      ['users', 'create', '--tenant', tenant.tenantId, '--email', 'ana@example.com', '--password-stdin'],
      env,
      'another long password',
    )
    expect(taken.status).toBe(1)
    expect(JSON.parse(taken.stderr.trim()).error).toMatch(/already exists/)

    const short = runCli(
      ['users', 'create', '--tenant', tenant.tenantId, '--email', 'bo@example.com', '--password-stdin'],
      env,
      'short',
    )
    expect(short.status).toBe(1)
    expect(JSON.parse(short.stderr.trim()).error).toMatch(/at least 12/)

    const noTty = runCli(
      ['users', 'create', '--tenant', tenant.tenantId, '--email', 'cy@example.com'],
      env,
      '',
    )
    expect(noTty.status).toBe(2)
    expect(noTty.stderr).toMatch(/--password-stdin/)

    const server = await startServer(env)
    try {
      const res = await fetch(`${server.url}/console/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ana@example.com', password: 'a long console password' }),
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('set-cookie')).toMatch(/^verdict_session=/)
      // The started server serves the console built at install time.
      const page = await fetch(`${server.url}/console/`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
      const script = (await page.text()).match(/\/console\/assets\/app\.[0-9a-f]+\.js/)?.[0]
      expect((await fetch(`${server.url}${script}`)).status).toBe(200)
    } finally {
      await server.stop()
    }

    const list = json(runCli(['users', 'list', '--tenant', tenant.tenantId], env).stdout)
    expect(list.users.map((u: { email: string }) => u.email)).toEqual(['ana@example.com'])
    const deleted = runCli(['users', 'delete', 'ana@example.com'], env)
    expect(deleted.status).toBe(0)
    expect(json(runCli(['users', 'list'], env).stdout).users).toEqual([])
    const again = runCli(['users', 'delete', user.userId], env)
    expect(again.status).toBe(1)
  })

  it.skipIf(!existsSync(SCRIPT))(
    'asks for the password twice on a terminal, without echoing it',
    async () => {
      const tenant = json(runCli(['tenants', 'create', '--name', 'tty'], env).stdout)
      const args = ['users', 'create', '--tenant', tenant.tenantId, '--email', 'tty@example.com']
      const out = await onTerminal(args, ['typed on a terminal', 'typed on a terminal'])
      expect(out).toMatch(/Password: /)
      expect(out).toMatch(/Repeat password: /)
      expect(out).not.toContain('typed on a terminal')
      expect(out).toContain('"email":"tty@example.com"')
      const differ = await onTerminal(
        [...args.slice(0, -1), 'tty2@example.com'],
        ['one long password', 'another one'],
      )
      expect(differ).toContain('the two passwords differ')
    },
  )
})
