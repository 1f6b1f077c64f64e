/**
 * `npm run bench`: loopback load with autocannon (50 connections) against the real server and, in the
 * same run, against a bare Fastify echo server as the reference. Prints figures; asserts nothing.
 * Flags (see options.ts): --seconds N, --pg, --history, --history-events N, --history-people N, --nodes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchAi } from './ai.js'
import { watchBackends } from './cpu.js'
import { benchEmailIntel } from './email-intel.js'
import {
  engineFigures,
  type Outcome,
  POSTGRES,
  type RunSettings,
  SQLITE,
  scoreReference,
  summary,
} from './engine.js'
import { historyClockStart } from './history.js'
import { type BenchServer, load, row, startBenchServer } from './http.js'
import { benchIpIntel } from './ip-intel.js'
import { nodesFigures } from './nodes.js'
import { type BenchOptions, benchOptions } from './options.js'
import { createBenchSchema, redact } from './pg.js'
import { benchPhoneIntel } from './phone-intel.js'
import { benchStartup } from './startup.js'

async function intelFigures(): Promise<void> {
  console.log('\nreference data, in process')
  const email = await benchEmailIntel()
  console.log(
    `  email analysis   ${String(email.checksPerSec).padStart(9)} checks/s   (load ${Math.round(email.loadMs)} ms)`,
  )
  const ip = await benchIpIntel()
  console.log(
    `  IP lookup        ${String(ip.lookupsPerSec).padStart(9)} lookups/s  (load ${Math.round(ip.loadMs)} ms)`,
  )
  const phone = await benchPhoneIntel()
  console.log(
    `  phone analysis   ${String(phone.checksPerSec).padStart(9)} checks/s   (load ${Math.round(phone.loadMs)} ms)`,
  )
  const ai = await benchAi()
  console.log(
    `  AI explanation   cache miss +${ai.missMs.toFixed(2)} ms (loopback provider), cache hit +${ai.hitMs.toFixed(3)} ms`,
  )
  const start = await benchStartup()
  console.log(
    `  server start     ${start.startMs} ms to listening, RSS ${start.rssMb} MB with all data loaded`,
  )
}

/** Undo steps (stop a server, remove a database) run in reverse, also when the run is interrupted. */
const cleanups: (() => Promise<void>)[] = []
let cleaning: Promise<void> | undefined
let interrupted = false

function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((e: Error) => console.error(e.message))
  })()
  return cleaning
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    interrupted = true
    process.stderr.write(`\n${sig}: stopping servers and removing bench databases\n`)
    void cleanUp().finally(() => process.exit(130))
  })
}

async function started(server: Promise<BenchServer>): Promise<BenchServer> {
  const s = await server
  cleanups.push(s.stop)
  return s
}

/** Pops and runs the newest `count` undo steps (a server, then what it was using). */
async function release(count: number): Promise<void> {
  for (const fn of cleanups.splice(-count).reverse()) await fn()
}

/** The reference echo, GET /v1/config and the SQLite block; returns the validated echo's figures. */
async function sqliteFigures(
  echo: BenchServer,
  opts: BenchOptions,
  settings: RunSettings,
  clock: { clockStartMs?: number },
  outcomes: Outcome[],
): ReturnType<typeof scoreReference> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const verdict = await started(
    startBenchServer({
      kind: 'verdict',
      target: { kind: 'sqlite', file: join(dir, 'bench.db') },
      ...clock,
      scratchDir: dir,
    }),
  )
  const base = `http://127.0.0.1:${verdict.port}`
  const ref = await load({ url: `http://127.0.0.1:${echo.port}/echo`, duration: opts.seconds })
  console.log(row('reference: bare Fastify GET echo', ref))
  const config = await load({
    url: `${base}/v1/config`,
    headers: { 'x-api-key': verdict.apiKey },
    duration: opts.seconds,
  })
  console.log(row('verdict: GET /v1/config', config))
  console.log(`ratio GET /v1/config / reference: ${(config.reqPerSec / ref.reqPerSec).toFixed(2)}\n`)

  const scoreRef = await scoreReference(echo, opts.seconds)
  console.log(row('reference: Fastify validated echo', scoreRef))
  console.log(`${''.padEnd(34)} CPU ${scoreRef.cpuUs} us/event at saturation (50 connections)`)
  outcomes.push(...(await engineFigures(SQLITE, verdict, scoreRef, settings)))
  await release(2)
  return scoreRef
}

async function main(): Promise<void> {
  const opts = benchOptions(process.argv.slice(2), process.env)
  const settings: RunSettings = { ...opts }
  // Each server's clock starts in the past in history mode (see historyClockStart).
  const clock = () => (opts.history ? { clockStartMs: historyClockStart(opts.historyEvents) } : {})
  const outcomes: Outcome[] = []
  // Made first so a PostgreSQL that cannot be reached fails the run before the long SQLite part.
  const pg = opts.pg ? await createBenchSchema(opts.pgUrl) : null
  if (pg) cleanups.push(pg.drop)
  const nodesPg = opts.nodes ? await createBenchSchema(opts.pgUrl) : null
  if (nodesPg) cleanups.push(nodesPg.drop)

  const echo = await started(startBenchServer({ kind: 'echo' }))
  console.log(`verdict benchmark (loopback, autocannon, 50 connections, ${opts.seconds} s per run)\n`)
  const scoreRef = opts.pgOnly
    ? await scoreReference(echo, opts.seconds)
    : await sqliteFigures(echo, opts, settings, clock(), outcomes)
  if (opts.pgOnly) {
    console.log(row('reference: Fastify validated echo', scoreRef))
    console.log(`${''.padEnd(34)} CPU ${scoreRef.cpuUs} us/event at saturation (50 connections)`)
  }

  if (pg) {
    // The server's connections carry this name, so their backends' CPU counts with the service's.
    const appName = `verdict_${pg.schema}`
    const server = await started(
      startBenchServer(
        {
          kind: 'verdict',
          target: { kind: 'postgres', url: opts.pgUrl },
          pgSchema: pg.schema,
          ...clock(),
        },
        { PGAPPNAME: appName },
      ),
    )
    const backends = await watchBackends(opts.pgUrl, appName)
    cleanups.push(backends.close)
    console.log(
      `\nPostgreSQL (${redact(opts.pgUrl)}, schema ${pg.schema}; reference: the validated echo above)`,
    )
    outcomes.push(
      ...(await engineFigures(POSTGRES, server, scoreRef, {
        ...settings,
        backends,
        // Autovacuum (or the planner-statistics job, where autovacuum is off) analyses a new table within
        // a minute of its first rows; without it the cached plans stay those made for empty tables.
        afterWarmUp: async () => {
          await pg.analyze()
          return 'ANALYZE of the schema (as autovacuum or the planner-statistics job would within a minute)'
        },
        // Autovacuum would have analysed tables that grew this much; do it now rather than by chance.
        afterHistory: async () => {
          await pg.analyze()
          return 'ANALYZE run on the schema (as autovacuum would after such growth)'
        },
      })),
    )
    await release(2)
  }
  if (nodesPg) {
    await nodesFigures({
      pgUrl: opts.pgUrl,
      pgSchema: nodesPg.schema,
      redisUrl: opts.redisUrl,
      seconds: opts.seconds,
      started,
      release,
    })
  }
  await release(cleanups.length)
  console.log(`\n${summary(outcomes)}`)
  if (!opts.pgOnly) await intelFigures()
}

try {
  await main()
} catch (err) {
  await cleanUp()
  // Requests cut off by the interruption fail; the signal handler reports and exits.
  if (interrupted) await new Promise(() => {})
  throw err
} finally {
  await cleanUp()
}
