import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { runCliAsync, startServer } from '../helpers/processes.js'
import {
  type EventRow,
  linkCounts,
  linkTriples,
  type ObservationRow,
  rollup,
  seeded,
} from '../helpers/recount.js'

const hasPg = await pgAvailable()
const SECRET = 'crash-test-secret-0123456789abcdefghijkl'
const KILLS = 10
const CLIENTS = 8

/** Read-only SQL over the stopped (or running) server's storage, independent of our store code. */
interface Reader {
  all<T>(sql: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
}

async function readerFor(engine: 'sqlite' | 'postgres', target: string, schema?: string): Promise<Reader> {
  if (engine === 'sqlite') {
    const db = new Database(target, { readonly: true })
    return {
      all: async <T>(sql: string, params: unknown[] = []) => db.prepare(sql).all(...params) as T[],
      close: async () => {
        db.close()
      },
    }
  }
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
  await client.connect()
  return {
    all: async <T>(sql: string, params: unknown[] = []) => {
      let i = 0
      return (
        await client.query(
          sql.replace(/\?/g, () => `$${++i}`),
          params,
        )
      ).rows as T[]
    },
    close: () => client.end(),
  }
}

/**
 * Drives scores and batches from several clients until the server dies under them; returns the
 * event ids it answered 200 for. A request the kill cut off is simply not acknowledged.
 */
async function drive(url: string, key: string, rnd: ReturnType<typeof seeded>, acked: Set<string>) {
  let alive = true
  const row = () => ({
    event: rnd.pick(['signup', 'login', 'checkout']),
    user_id: `user-${rnd.int(0, 60)}`,
    ip: `81.2.69.${rnd.int(1, 40)}`,
    device_id: `device-fingerprint-${rnd.int(0, 25)}`,
  })
  const client = async () => {
    while (alive) {
      const batch = rnd.chance(0.15)
      try {
        const res = await fetch(`${url}/v1/${batch ? 'batch/score' : 'score'}`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(batch ? { rows: Array.from({ length: rnd.int(2, 40) }, row) } : row()),
        })
        const body = (await res.json()) as { event_id?: string; results?: { event_id: string }[] }
        if (res.status !== 200) continue
        for (const id of batch ? (body.results ?? []).map((r) => r.event_id) : [body.event_id!]) acked.add(id)
      } catch {
        alive = false
      }
    }
  }
  return { done: Promise.all(Array.from({ length: CLIENTS }, client)), stop: () => (alive = false) }
}

describe.each(['sqlite', 'postgres'] as const)('kill -9 under load on %s', (engine) => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-crash-'))
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
    rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    `loses no acknowledged event over ${KILLS} kills; usage and aggregates agree with a recount`,
    async () => {
      let env: Record<string, string>
      let schema: string | undefined
      const file = join(dir, 'verdict.db')
      if (engine === 'sqlite') env = { DATABASE_URL: `sqlite:${file}`, VERDICT_SECRET: SECRET }
      else {
        const s = await createSchema()
        cleanups.push(s.drop)
        schema = s.schema
        env = {
          DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
          VERDICT_SECRET: SECRET,
        }
      }
      const created = await runCliAsync(
        ['tenants', 'create', '--name', 'crash', '--rate-limit', '10000000', '--monthly-quota', '100000000'],
        env,
      )
      expect(created.status, created.stderr).toBe(0)
      const { tenantId, apiKey } = JSON.parse(created.stdout) as { tenantId: string; apiKey: string }
      const rnd = seeded(engine === 'sqlite' ? 9001 : 9002)
      const acked = new Set<string>()
      for (let kill = 0; kill < KILLS; kill++) {
        const server = await startServer(env)
        const before = acked.size
        const load = await drive(server.url, apiKey, rnd, acked)
        // Let some answers through first, then kill at a random moment.
        while (acked.size < before + 5) await new Promise((r) => setTimeout(r, 5))
        await new Promise((r) => setTimeout(r, rnd.int(50, 800)))
        expect(await server.signal('SIGKILL')).toBeNull()
        load.stop()
        await load.done
      }

      // Over HTTP, after a clean start: every acknowledged id is listed.
      const server = await startServer(env)
      const listed = new Set<string>()
      try {
        for (let offset = 0; ; offset += 200) {
          const res = await fetch(`${server.url}/v1/events?limit=200&offset=${offset}`, {
            headers: { 'x-api-key': apiKey },
          })
          expect(res.status).toBe(200)
          const page = (await res.json()) as { events: { id: string }[] }
          for (const e of page.events) listed.add(e.id)
          if (page.events.length < 200) break
        }
      } finally {
        await server.stop()
      }
      const lost = [...acked].filter((id) => !listed.has(id))
      const unacknowledged = [...listed].filter((id) => !acked.has(id)).length
      console.log(
        `kill -9 on ${engine}: ${KILLS} kills, acknowledged ${acked.size}, found ${acked.size - lost.length}, lost ${lost.length}, recorded but unacknowledged ${unacknowledged}`,
      )
      expect(acked.size).toBeGreaterThan(KILLS * 5)
      expect(lost).toEqual([])

      // The meter, the device links and the rollups agree with a recount of the rows that exist.
      const db = await readerFor(engine, file, schema)
      try {
        const [usage] = await db.all<{ used: number }>(
          'SELECT sum(used) AS used FROM usage WHERE tenant_id = ?',
          [tenantId],
        )
        expect(Number(usage?.used)).toBe(listed.size)
        const obs = await db.all<ObservationRow>(
          `SELECT id, event_id, created_ms, device_id, token_id, rung, user_id, ip_hash, ip_prefix
             FROM device_observations WHERE tenant_id = ? ORDER BY id`,
          [tenantId],
        )
        expect(obs.length).toBe(listed.size)
        const links = await db.all<{ kind: string; key: string; member: string }>(
          'SELECT kind, key, member FROM device_links WHERE tenant_id = ?',
          [tenantId],
        )
        expect(new Set(links.map((l) => `${l.kind}|${l.key}|${l.member}`))).toEqual(linkTriples(obs))
        const counts = new Map<string, number>()
        for (const l of links) counts.set(`${l.kind}|${l.key}`, (counts.get(`${l.kind}|${l.key}`) ?? 0) + 1)
        for (const { kind, key, n } of linkCounts(obs).values()) expect(counts.get(`${kind}|${key}`)).toBe(n)
        const events = await db.all<EventRow>(
          'SELECT id, created_ms, verdict, score, reasons, checks, asn, asn_bad FROM events WHERE tenant_id = ?',
          [tenantId],
        )
        const rows = await db.all<{
          hour_ms: number
          verdict: string
          reason: string
          n: number
          score_sum: number
        }>('SELECT hour_ms, verdict, reason, n, score_sum FROM event_rollup WHERE tenant_id = ?', [tenantId])
        const got = new Map(
          rows.map((r) => [
            `${Number(r.hour_ms)}|${r.verdict}|${r.reason}`,
            { n: Number(r.n), sum: Number(r.score_sum) },
          ]),
        )
        expect(got).toEqual(rollup(events))
      } finally {
        await db.close()
      }
    },
    300_000,
  )
})
