import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { parseExposition, total } from './scrape.js'

const ROOT = join(import.meta.dirname, '..', '..')
const SECRET = 'admin-listener-test-secret-0123456789abcdef'
const hasPg = await pgAvailable()
const dir = mkdtempSync(join(tmpdir(), 'verdict-admin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise((r) => server.close(r))
  return port
}

/** The compiled server (what `npm start` runs) with an admin port; its logs are collected. */
async function start(env: Record<string, string>) {
  const adminPort = await freePort()
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'server.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', VERDICT_ADMIN_PORT: String(adminPort), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  child.stdout?.on('data', (c: Buffer) => {
    logs += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    logs += c.toString()
  })
  const admin = `http://127.0.0.1:${adminPort}`
  const get = async (url: string, init?: RequestInit) => {
    const res = await fetch(url, init)
    return { status: res.status, text: await res.text() }
  }
  const up = await eventually(() => logs.includes(`Server listening at ${admin}`), 30_000)
  expect(up, logs).toBe(true)
  return {
    admin,
    get,
    logs: () => logs,
    /** The main port, once it listens. */
    main: () => {
      const m = [...logs.matchAll(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/g)]
        .map((x) => x[1]!)
        .find((u) => u !== admin)
      return m
    },
    stop: () =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode)
        child.once('exit', (code) => resolve(code))
        child.kill('SIGTERM')
      }),
  }
}

type Server = Awaited<ReturnType<typeof start>>

/** While the start is held, the admin port answers: live, not ready (migrating); then ready. */
async function heldThenReady(server: Server, release: () => Promise<void>): Promise<void> {
  const live = await server.get(`${server.admin}/livez`)
  expect(live.status).toBe(200)
  const held = await server.get(`${server.admin}/readyz`)
  expect(held.status).toBe(503)
  expect(JSON.parse(held.text)).toEqual({ status: 'not_ready', reason: 'migrating' })
  expect(server.main()).toBeUndefined()
  await release()
  expect(
    await eventually(async () => (await server.get(`${server.admin}/readyz`)).status === 200, 30_000),
  ).toBe(true)
  // Log lines reach the pipe a moment after the listen.
  expect(await eventually(() => server.main() !== undefined)).toBe(true)
  const main = server.main()!
  // The admin port serves metrics without a token; the main port serves none of the operator routes.
  const metrics = await server.get(`${server.admin}/metrics`)
  expect(metrics.status).toBe(200)
  expect(total(parseExposition(metrics.text), 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
  for (const path of ['/metrics', '/livez', '/readyz'])
    expect((await server.get(`${main}${path}`)).status).toBe(404)
  // Every response carries a request id, the caller's when it sent a plain one.
  const res = await fetch(`${main}/v1/health`, { headers: { 'x-request-id': 'lb-check-42' } })
  expect(res.headers.get('x-request-id')).toBe('lb-check-42')
  const logged = () => /"reqId":"lb-check-42".*"route":"\/v1\/health"/.test(server.logs())
  expect(await eventually(logged), server.logs()).toBe(true)
  expect(server.logs()).not.toContain('FSTDEP')
}

describe('VERDICT_ADMIN_PORT: the operator listener, up before the migrations', () => {
  it('SQLite: /readyz is 503 while another process holds the write lock the migrations need', async () => {
    const file = join(dir, 'held.db')
    const holder = new Database(file)
    holder.pragma('journal_mode = WAL')
    holder.prepare('BEGIN IMMEDIATE').run()
    const server = await start({ DATABASE_URL: file })
    try {
      await heldThenReady(server, async () => {
        holder.prepare('ROLLBACK').run()
        holder.close()
      })
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.skipIf(!hasPg)('PostgreSQL: /readyz is 503 while another process holds the start-up lock', async () => {
    const { schema, drop } = await createSchema()
    const holder = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
    await holder.connect()
    await holder.query(
      "SELECT pg_advisory_lock(hashtext('verdict:startup:' || current_database() || ':' || coalesce(current_schema(), '')))",
    )
    const url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
    const server = await start({ DATABASE_URL: url, VERDICT_SECRET: SECRET })
    try {
      await heldThenReady(server, async () => {
        await holder.query('SELECT pg_advisory_unlock_all()')
        await holder.end()
      })
    } finally {
      expect(await server.stop()).toBe(0)
      await drop()
    }
  })
})
