/**
 * `node dist/bench/trips.js [--sqlite] [--tokens] [events] [group sizes…]` (`npm run bench:trips`): what
 * a scored event costs in statements, counted rather than timed, so the figure does not depend on how busy
 * the machine is. The server runs in this process against a fresh PostgreSQL schema (VERDICT_BENCH_PG,
 * default the local `test` database) or, with --sqlite, a fresh SQLite file, and the score mix is posted
 * in groups of G concurrent requests (with --tokens each replaying its fingerprint's device token: rung
 * 1). Printed per group size: statements per event (on PostgreSQL a message of several statements counts
 * as one: BEGIN with the transaction's first read, blind writes with the next read or with COMMIT;
 * statements of units side by side are pipelined and share round trips) and by statement, with the wall time around each (on SQLite that is CPU of the event loop; on
 * PostgreSQL it includes the round trip); on PostgreSQL also the bytes each table and index grew by per
 * event, the events row's stored size and how many rows PostgreSQL compressed (TOAST, backend CPU); and
 * the CPU per event of this process and of its backends (compare those only with another build run in
 * the same minutes).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { Db } from '../src/store/engine/db.js'
import { openStore } from '../src/store/index.js'
import { watchBackends } from './cpu.js'
import { createBenchSchema } from './pg.js'
import { label, watchStatements } from './profile.js'
import { scoringApp } from './score-app.js'
import { scoreBodies } from './score-mix.js'

const URL = process.env['VERDICT_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * Counts every statement of `db` from now on, with the wall time around it, and BEGIN and COMMIT of each
 * transaction (on PostgreSQL each is a round trip).
 */
function countTrips(db: Db) {
  const byLabel = new Map<string, { n: number; ms: number }>()
  let trips = 0
  const add = (l: string, n: number, ms: number) => {
    const r = byLabel.get(l) ?? { n: 0, ms: 0 }
    r.n += n
    r.ms += ms
    byLabel.set(l, r)
    trips += n
  }
  // On PostgreSQL each message counts once (BEGIN with a transaction's first read, COMMIT with what waits
  // before it); on SQLite BEGIN and COMMIT are two statements.
  const pipelined = (db as unknown as { execPipeline?: unknown }).execPipeline !== undefined
  const inner = watchStatements(db, (l, ms) => add(label(l), 1, ms)) as unknown as { tx: Db['tx'] }
  const tx = inner.tx.bind(db)
  inner.tx = (work) => {
    if (!pipelined) add('BEGIN + COMMIT', 2, 0)
    return tx(work)
  }
  return {
    reset: () => {
      byLabel.clear()
      trips = 0
    },
    take: () => ({ trips, byLabel: [...byLabel].sort((a, b) => b[1].n - a[1].n || b[1].ms - a[1].ms) }),
  }
}

async function sizes(c: pg.Client, schema: string): Promise<Map<string, number>> {
  const r = await c.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')`,
    [schema],
  )
  const toast = await c.query<{ name: string; bytes: string }>(
    `SELECT c.relname || ' (TOAST)' AS name, pg_relation_size(c.reltoastrelid) AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.reltoastrelid <> 0`,
    [schema],
  )
  return new Map([...r.rows, ...toast.rows].map((x) => [x.name, Number(x.bytes)]))
}

/**
 * With --tokens: every body replays the device token the first score of its fingerprint returned (rung 1,
 * a browser that keeps its cookie); those first scores are made before the measured ones.
 */
async function withTokens(post: Post, bodies: Record<string, unknown>[]): Promise<object[]> {
  const tokens = new Map<string, string>()
  for (const id of new Set(bodies.map((b) => b['device_id']))) {
    if (typeof id !== 'string') continue
    const res = await post({ event: 'signup', device_id: id, ip: '73.11.1.1' })
    const token = (res.json() as { device_token?: string }).device_token
    if (token) tokens.set(id, token)
  }
  return bodies.map((b) => {
    const token = tokens.get(String(b['device_id']))
    return token ? { ...b, device_token: token } : b
  })
}

type Post = (b: object) => Promise<{ statusCode: number; body: string; json: () => unknown }>

async function measureSqlite(events: number, group: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-trips-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'trips.db') })
  const { post, close } = await scoringApp(store, 'trips')
  const trips = countTrips(store.db)
  try {
    for (const b of scoreBodies(200)) await post(b)
    const bodies = tokens ? await withTokens(post, scoreBodies(events)) : scoreBodies(events)
    trips.reset()
    const cpu0 = process.cpuUsage()
    await postAll(post, bodies, group)
    const cpu = process.cpuUsage(cpu0)
    return report(
      events,
      group,
      trips.take(),
      `this process ${((cpu.user + cpu.system) / events).toFixed(0)} us`,
    )
  } finally {
    await close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function postAll(post: Post, bodies: object[], group: number): Promise<void> {
  for (let i = 0; i < bodies.length; i += group) {
    const res = await Promise.all(bodies.slice(i, i + group).map(post))
    for (const r of res)
      if (r.statusCode !== 200) throw new Error(`score answered ${r.statusCode}: ${r.body}`)
  }
}

function report(
  events: number,
  group: number,
  t: ReturnType<ReturnType<typeof countTrips>['take']>,
  cpu: string,
): string {
  const per = (n: number) => (n / events).toFixed(2)
  return [
    `group ${String(group).padStart(3)}: ${per(t.trips)} statements/event; CPU/event: ${cpu}`,
    '  statements per event, wall us per event around them:',
    ...t.byLabel.map(
      ([l, r]) => `    ${per(r.n).padStart(6)} ${((r.ms * 1000) / events).toFixed(1).padStart(7)}  ${l}`,
    ),
  ].join('\n')
}

async function measure(events: number, group: number): Promise<string> {
  const bench = await createBenchSchema(URL)
  const appName = `verdict_${bench.schema}`
  process.env['PGAPPNAME'] = appName
  const admin = new pg.Client({ connectionString: URL })
  await admin.connect()
  const store = await openStore({ kind: 'postgres', url: URL }, { pgSchema: bench.schema })
  const { post, close } = await scoringApp(store, 'trips')
  const trips = countTrips(store.db)
  const backends = await watchBackends(URL, appName)
  try {
    for (const b of scoreBodies(200)) await post(b)
    const bodies = tokens ? await withTokens(post, scoreBodies(events)) : scoreBodies(events)
    const before = await sizes(admin, bench.schema)
    trips.reset()
    await backends.start()
    const cpu0 = process.cpuUsage()
    await postAll(post, bodies, group)
    const cpu = process.cpuUsage(cpu0)
    const backendMs = await backends.stop()
    const t = trips.take()
    const after = await sizes(admin, bench.schema)
    const grew = [...after]
      .map(([name, b]) => [name, b - (before.get(name) ?? 0)] as const)
      .filter(([, b]) => b > 0)
      .sort((a, b) => b[1] - a[1])
    const row = await admin.query<{ row: string; inputs: string; checks: string; compressed: string }>(
      `SELECT AVG(pg_column_size(e.*)) AS row, AVG(pg_column_size(inputs)) AS inputs,
              AVG(pg_column_size(checks)) AS checks,
              AVG(CASE WHEN pg_column_compression(inputs) IS NOT NULL OR pg_column_compression(checks) IS NOT NULL
                       THEN 1 ELSE 0 END) AS compressed
         FROM ${bench.schema}.events e`,
    )
    const r = row.rows[0]!
    return [
      report(
        events,
        group,
        t,
        `this process ${((cpu.user + cpu.system) / events).toFixed(0)} us, backends ${(
          (backendMs * 1000) / events
        ).toFixed(0)} us`,
      ),
      `  events row ${Math.round(Number(r.row))} B stored (inputs ${Math.round(Number(r.inputs))} B, checks ${Math.round(
        Number(r.checks),
      )} B), ${(100 * Number(r.compressed)).toFixed(0)} % of rows compressed by PostgreSQL`,
      `  bytes grown per event by relation (total ${Math.round(grew.reduce((s, [, b]) => s + b, 0) / events)} B):`,
      ...grew.slice(0, 14).map(([name, b]) => `    ${String(Math.round(b / events)).padStart(6)}  ${name}`),
    ].join('\n')
  } finally {
    await backends.close()
    await close()
    await store.close()
    await admin.end()
    await bench.drop()
  }
}

const all = process.argv.slice(2)
const tokens = all.includes('--tokens')
const args = all.filter((a) => a !== '--tokens')
const sqlite = args[0] === '--sqlite'
const [n = '3000', ...groups] = sqlite ? args.slice(1) : args
for (const g of groups.length ? groups : ['1', '32'])
  console.log(await (sqlite ? measureSqlite : measure)(Number(n), Number(g)))
process.exit(0)
