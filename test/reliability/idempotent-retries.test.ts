import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { runCliAsync, startServer } from '../helpers/processes.js'
import { seeded } from '../helpers/recount.js'

const hasPg = await pgAvailable()
const SECRET = 'retry-test-secret-0123456789abcdefghijklm'
const KILLS = 4

type Answer = { status: number; eventId?: string; replayed: boolean }

async function send(url: string, apiKey: string, key: string, body: object): Promise<Answer> {
  const res = await fetch(`${url}/v1/score`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as { event_id?: string }
  return {
    status: res.status,
    ...(json.event_id ? { eventId: json.event_id } : {}),
    replayed: res.headers.get('idempotent-replayed') === 'true',
  }
}

async function setupEnv(engine: 'sqlite' | 'postgres', dir: string, cleanups: (() => Promise<void>)[]) {
  if (engine === 'sqlite')
    return { DATABASE_URL: `sqlite:${join(dir, 'verdict.db')}`, VERDICT_SECRET: SECRET }
  const s = await createSchema()
  cleanups.push(s.drop)
  return {
    DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${s.schema}`)}`,
    VERDICT_SECRET: SECRET,
  }
}

async function tenantKey(env: Record<string, string>): Promise<string> {
  const created = await runCliAsync(
    ['tenants', 'create', '--name', 'retries', '--rate-limit', '10000000', '--monthly-quota', '100000000'],
    env,
  )
  expect(created.status, created.stderr).toBe(0)
  return (JSON.parse(created.stdout) as { apiKey: string }).apiKey
}

async function eventCount(url: string, apiKey: string): Promise<number> {
  const res = await fetch(`${url}/v1/events?limit=1`, { headers: { 'x-api-key': apiKey } })
  return ((await res.json()) as { total: number }).total
}

describe.each(['sqlite', 'postgres'] as const)('idempotent retries across crashes on %s', (engine) => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-retries-'))
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
    rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    `every key records exactly one event over ${KILLS} kills, retried until answered`,
    async () => {
      const env = await setupEnv(engine, dir, cleanups)
      const apiKey = await tenantKey(env)
      const rnd = seeded(engine === 'sqlite' ? 77 : 78)
      const bodies = new Map<string, object>()
      const answered = new Map<string, Answer>()
      let nextKey = 0
      let replayedAfterCrash = 0
      for (let round = 0; round <= KILLS; round++) {
        const server = await startServer(env)
        // Every key the crash left without an answer is sent again, with the same body.
        for (const [key, body] of bodies) {
          if (answered.has(key)) continue
          const a = await send(server.url, apiKey, key, body)
          expect(a.status).toBe(200)
          if (a.replayed) replayedAfterCrash++
          answered.set(key, a)
        }
        if (round === KILLS) {
          const total = await eventCount(server.url, apiKey)
          await server.stop()
          console.log(
            `idempotent retries on ${engine}: ${bodies.size} keys, ${total} events, ${replayedAfterCrash} retries answered from a response recorded before the crash`,
          )
          expect([...answered.values()].every((a) => a.status === 200)).toBe(true)
          expect(new Set([...answered.values()].map((a) => a.eventId)).size).toBe(bodies.size)
          expect(total).toBe(bodies.size)
          return
        }
        let alive = true
        const client = async () => {
          while (alive) {
            const key = `order-${nextKey++}`
            const body = {
              event: 'checkout',
              user_id: `u-${rnd.int(0, 30)}`,
              ip: `81.2.69.${rnd.int(1, 30)}`,
            }
            bodies.set(key, body)
            try {
              const a = await send(server.url, apiKey, key, body)
              if (a.status === 200) answered.set(key, a)
            } catch {
              alive = false
            }
          }
        }
        const clients = Promise.all(Array.from({ length: 6 }, client))
        const enough = await eventually(() => answered.size >= 5 * (round + 1), 30_000, 5)
        expect(enough, `round ${round}: ${answered.size} answered after 30 s`).toBe(true)
        await new Promise((r) => setTimeout(r, rnd.int(50, 500)))
        await server.signal('SIGKILL')
        alive = false
        await clients
      }
    },
    300_000,
  )
})

describe('idempotent retries across two nodes on postgres', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-retries-'))
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
    rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(!hasPg)(
    'two nodes receiving the same key at once record one event and give the same answer',
    async () => {
      const env = await setupEnv('postgres', dir, cleanups)
      const apiKey = await tenantKey(env)
      const a = await startServer(env)
      const b = await startServer(env)
      try {
        for (let i = 0; i < 20; i++) {
          const body = { event: 'signup', user_id: `dup-${i}` }
          const [x, y] = await Promise.all([
            send(a.url, apiKey, `dup-${i}`, body),
            send(b.url, apiKey, `dup-${i}`, body),
          ])
          expect([x.status, y.status]).toEqual([200, 200])
          expect(x.eventId).toBe(y.eventId)
          expect([x.replayed, y.replayed].filter(Boolean)).toHaveLength(1)
        }
        expect(await eventCount(a.url, apiKey)).toBe(20)
      } finally {
        await a.stop()
        await b.stop()
      }
    },
    120_000,
  )
})
