import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { runCliAsync, startServer } from '../helpers/processes.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

const hasPg = await pgAvailable()
const SECRET = 'webhook-crash-secret-0123456789abcdefghij'
const KILLS = 4
const CLIENTS = 4

/** Entry ids of list_entries, read with plain SQL independent of our store code. */
async function storedEntryIds(
  engine: 'sqlite' | 'postgres',
  file: string,
  schema?: string,
): Promise<Set<string>> {
  if (engine === 'sqlite') {
    const db = new Database(file, { readonly: true })
    try {
      return new Set(
        (db.prepare('SELECT id FROM list_entries').all() as { id: number }[]).map((r) => String(r.id)),
      )
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
  await client.connect()
  try {
    return new Set(
      (await client.query('SELECT id FROM list_entries')).rows.map((r: { id: string }) => String(r.id)),
    )
  } finally {
    await client.end()
  }
}

describe.each(['sqlite', 'postgres'] as const)('kill -9 between a change and its webhook on %s', (engine) => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-wh-crash-'))
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
    rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    `delivers exactly the acknowledged changes' messages over ${KILLS} kills`,
    async () => {
      const rx = await startReceiver()
      cleanups.push(rx.close)
      const file = join(dir, 'verdict.db')
      let schema: string | undefined
      const base = {
        VERDICT_SECRET: SECRET,
        VERDICT_WEBHOOK_ALLOW_PRIVATE: '1',
        VERDICT_WEBHOOK_CA_FILE: rx.certFile,
      }
      let env: Record<string, string>
      if (engine === 'sqlite') env = { ...base, DATABASE_URL: `sqlite:${file}` }
      else {
        const s = await createSchema()
        cleanups.push(s.drop)
        schema = s.schema
        env = { ...base, DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` }
      }
      const created = await runCliAsync(
        ['tenants', 'create', '--name', 'wh', '--rate-limit', '10000000'],
        env,
      )
      expect(created.status, created.stderr).toBe(0)
      const { apiKey } = JSON.parse(created.stdout) as { apiKey: string }
      const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' }

      let server = await startServer(env)
      const ep = await fetch(`${server.url}/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: rx.url, events: ['list.entry_added'] }),
      })
      expect(ep.status, await ep.clone().text()).toBe(200)
      const endpointId = ((await ep.json()) as { id: string }).id

      const acked = new Set<string>()
      let n = 0
      for (let kill = 0; kill < KILLS; kill++) {
        if (kill > 0) server = await startServer(env)
        let alive = true
        const client = async () => {
          while (alive) {
            try {
              const res = await fetch(`${server.url}/v1/lists`, {
                method: 'POST',
                headers,
                body: JSON.stringify({ list: 'block', type: 'user', value: `crash-user-${n++}` }),
              })
              const body = (await res.json()) as { id?: string }
              if (res.status === 200 && body.id) acked.add(body.id)
            } catch {
              alive = false
            }
          }
        }
        const before = acked.size
        const load = Promise.all(Array.from({ length: CLIENTS }, client))
        while (acked.size < before + 20) await new Promise((r) => setTimeout(r, 5))
        await new Promise((r) => setTimeout(r, 50 + kill * 100))
        expect(await server.signal('SIGKILL')).toBeNull()
        alive = false
        await load
      }

      // A clean start sends what is left, taking over the dead nodes' leases once they expire.
      server = await startServer(env)
      const entryOf = (body: string) => (JSON.parse(body) as { data: { entry_id: string } }).data.entry_id
      try {
        const all = await eventually(
          () => {
            const got = new Set(rx.received.map((r) => entryOf(r.body)))
            return [...acked].every((id) => got.has(id))
          },
          120_000,
          200,
        )
        expect(all).toBe(true)
        const settled = await eventually(
          async () => {
            const res = await fetch(`${server.url}/v1/webhooks/${endpointId}/deliveries?status=pending`, {
              headers,
            })
            return ((await res.json()) as { total: number }).total === 0
          },
          120_000,
          200,
        )
        expect(settled).toBe(true)
      } finally {
        await server.stop()
      }

      const stored = await storedEntryIds(engine, file, schema)
      const ids = new Map<string, Set<string>>()
      for (const r of rx.received) {
        const entry = entryOf(r.body)
        const set = ids.get(entry) ?? new Set<string>()
        set.add(r.headers['webhook-id']!)
        ids.set(entry, set)
      }
      const duplicates = rx.received.length - ids.size
      console.log(
        `webhooks kill -9 on ${engine}: ${KILLS} kills, acknowledged ${acked.size}, entries stored ${stored.size}, messages received ${ids.size}, duplicate deliveries ${duplicates}`,
      )
      // Exactly the committed changes: every acknowledged one, and none that is not stored.
      expect([...acked].filter((id) => !ids.has(id))).toEqual([])
      expect([...ids.keys()].filter((id) => !stored.has(id))).toEqual([])
      expect(ids.size).toBe(stored.size)
      // A message sent twice kept its webhook-id.
      for (const [entry, set] of ids) expect(set.size, entry).toBe(1)
    },
    400_000,
  )
})
