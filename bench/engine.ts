/** Score and batch figures of one storage engine, and the history mode's before/after comparison. */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type autocannon from 'autocannon'
import { type Latencies, latencyRow, oneAtATime, poisson } from './arrivals.js'
import { type BackendWatch, cpuDuring, threadCpuMs } from './cpu.js'
import { BATCH_ROWS, HISTORY_CONCURRENCY, recordHistory } from './history.js'
import { type BenchServer, type Figures, load, row } from './http.js'
import { scoreBodies } from './score-mix.js'

export interface Engine {
  name: 'sqlite' | 'postgres'
  title: string
  /** Labels, kept as they were for SQLite so older outputs compare line by line. */
  scoreLabel: string
  youngLabel: string
  historyLabel: string
  /** Prefix of the ratio and batch lines ('' for SQLite). */
  tag: string
  targets: {
    ratio: number
    p99: number
    batchMs: number
    /** CPU per scored event at saturation, µs (service, plus its backends on PostgreSQL). */
    cpuUs: number
    /** The same after the history (`--history`). */
    historyCpuUs: number
    /** One request at a time, p50 (ms); null where the issue sets none. */
    singleP50: number | null
    /** Poisson arrivals at the run's rate, p99 (ms). */
    poissonP99: number
  }
}

export const SQLITE: Engine = {
  name: 'sqlite',
  title: 'SQLite',
  scoreLabel: 'verdict: POST /v1/score (mixed)',
  youngLabel: 'verdict: POST /v1/score (young)',
  historyLabel: 'verdict: POST /v1/score (history)',
  tag: '',
  targets: {
    ratio: 0.35,
    p99: 20,
    batchMs: 150,
    cpuUs: 350,
    historyCpuUs: 400,
    singleP50: null,
    poissonP99: 10,
  },
}

export const POSTGRES: Engine = {
  name: 'postgres',
  title: 'PostgreSQL',
  scoreLabel: 'postgres: POST /v1/score (mixed)',
  youngLabel: 'postgres: POST /v1/score (young)',
  historyLabel: 'postgres: POST /v1/score (history)',
  tag: 'postgres ',
  targets: {
    ratio: 0.15,
    p99: 50,
    batchMs: 400,
    cpuUs: 700,
    historyCpuUs: 700,
    singleP50: 2,
    poissonP99: 15,
  },
}

/** History figures must keep this share of the young database's throughput. */
export const HISTORY_TARGET = 0.85

/** One target's outcome, for the summary at the end. */
export interface Outcome {
  engine: string
  what: string
  value: string
  target: string
  met: boolean
}

export interface RunSettings {
  seconds: number
  history: boolean
  historyEvents: number
  historyPeople: number
  /** Poisson arrival rate (requests per second) and how long that run lasts. */
  rate: number
  poissonSeconds: number
  /** Directory for CPU profiles (`--profile`), or null. */
  profileDir: string | null
  /** The PostgreSQL backends serving the server, whose CPU counts with the service's. */
  backends?: BackendWatch | null
  /** Runs just before the second measurement (PostgreSQL refreshes its planner statistics). */
  afterHistory?: () => Promise<string | null>
  /** Runs after the warm-up, before the first measurement (PostgreSQL: the same). */
  afterWarmUp?: () => Promise<string | null>
}

/** Seconds of saturation load before anything is measured: JIT, caches, pools and first rows. */
const WARM_UP_SECONDS = 3

function cycling(
  bodies: Record<string, unknown>[],
  path: string,
  headers: Record<string, string>,
): autocannon.Request[] {
  let i = 0
  return [
    {
      method: 'POST' as const,
      path,
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req: autocannon.Request) => ({
        ...req,
        body: JSON.stringify(bodies[i++ % bodies.length]),
      }),
    },
  ]
}

const MIX = 20_000

/** The echo server's validated-JSON reference, measured with the same request mix, and its CPU. */
export async function scoreReference(
  echo: BenchServer,
  seconds: number,
): Promise<Figures & { cpuUs: number }> {
  const m = await cpuDuring(echo.pid, null, () =>
    load({
      url: `http://127.0.0.1:${echo.port}`,
      duration: seconds,
      requests: cycling(scoreBodies(MIX), '/echo-score', {}),
    }),
  )
  return { ...m.result, cpuUs: perEvent(m.serviceMs, m.result.ok) }
}

const IDLE_MS = 3000
/** Quiet time before the idle window: the previous run's tail settles first. */
const SETTLE_MS = 5000
const rate = (ms: number) => ((ms * 1000) / IDLE_MS).toFixed(1)

const perEvent = (ms: number, events: number) => (events > 0 ? Math.round((ms * 1000) / events) : 0)

/** CPU per event of one measurement: the service, and on PostgreSQL its backends too. */
export interface Cpu {
  serviceUs: number
  backendUs: number
  totalUs: number
  /** Bytes the service process wrote to storage per event (SQLite: WAL and checkpoint); null if unknown. */
  writtenPerEvent: number | null
}

function cpuOf(
  m: { serviceMs: number; backendMs: number; writtenBytes: number | null },
  events: number,
): Cpu {
  const serviceUs = perEvent(m.serviceMs, events)
  const backendUs = perEvent(m.backendMs, events)
  const writtenPerEvent = m.writtenBytes === null || events === 0 ? null : Math.round(m.writtenBytes / events)
  return { serviceUs, backendUs, totalUs: serviceUs + backendUs, writtenPerEvent }
}

export function cpuText(c: Cpu, pg: boolean): string {
  if (pg) return `CPU ${c.totalUs} us/event (service ${c.serviceUs} + backends ${c.backendUs})`
  return `CPU ${c.totalUs} us/event${c.writtenPerEvent === null ? '' : `, ${(c.writtenPerEvent / 1024).toFixed(1)} KiB written/event`}`
}

/** The latency-and-CPU block of one database state: saturation, one at a time, Poisson arrivals. */
export interface ScoreFigures {
  saturation: Figures
  saturationCpu: Cpu
  single: Latencies
  singleCpu: Cpu
  arrivals: Latencies
  arrivalsCpu: Cpu
}

async function scoreFigures(
  engine: Engine,
  server: BenchServer,
  settings: RunSettings,
  label: string,
): Promise<ScoreFigures> {
  const pg = engine.name === 'postgres'
  const backends = settings.backends ?? null
  // Background work (jobs, the webhook dispatcher, pool upkeep) costs CPU without events; at low
  // rates it is a visible share of the per-event figure, so it is printed on its own. It is measured
  // after SETTLE_MS, so that the tail of the previous run (the checkpoint worker copying back what
  // the warm-up or the history left in the WAL) is neither read as idle work nor left for the next run.
  await new Promise((r) => setTimeout(r, SETTLE_MS))
  const idle = await cpuDuring(server.pid, backends, () => new Promise((r) => setTimeout(r, IDLE_MS)))
  const idleText = pg
    ? `service ${rate(idle.serviceMs)} + backends ${rate(idle.backendMs)} ms/s`
    : `${rate(idle.serviceMs)} ms/s`
  console.log(`${engine.tag}idle CPU over ${IDLE_MS / 1000} s (no requests): ${idleText}`)
  const sat = await cpuDuring(server.pid, backends, () => scoreLoad(server, settings.seconds))
  const saturationCpu = cpuOf(sat, sat.result.ok)
  console.log(row(label, sat.result))
  console.log(`${''.padEnd(34)} ${cpuText(saturationCpu, pg)} at saturation (50 connections)`)
  const target = {
    port: server.port,
    path: '/v1/score',
    headers: { 'x-api-key': server.apiKey },
    bodies: scoreBodies(MIX),
  }
  const single = await cpuDuring(server.pid, backends, () => oneAtATime(target, settings.seconds))
  const singleCpu = cpuOf(single, single.result.ok)
  console.log(`${latencyRow(`${engine.tag}one at a time`, single.result)}   ${cpuText(singleCpu, pg)}`)
  const arr = await cpuDuring(server.pid, backends, () =>
    poisson(target, settings.rate, settings.poissonSeconds),
  )
  const arrivalsCpu = cpuOf(arr, arr.result.ok)
  console.log(
    `${latencyRow(`${engine.tag}Poisson ${settings.rate}/s (open loop)`, arr.result)}   ${cpuText(arrivalsCpu, pg)}`,
  )
  return {
    saturation: sat.result,
    saturationCpu,
    single: single.result,
    singleCpu,
    arrivals: arr.result,
    arrivalsCpu,
  }
}

/**
 * `--profile`: one more saturation run with the V8 profiler on and every statement timed, so the
 * profiler's own cost stays out of the figures above. Prints the statement table and the CPU per thread.
 */
async function profileRun(
  engine: Engine,
  server: BenchServer,
  settings: RunSettings,
  what: string,
): Promise<void> {
  if (!settings.profileDir) return
  const dir = resolve(settings.profileDir)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${engine.name}-${what}-${Date.now()}.cpuprofile`)
  const threadsBefore = threadCpuMs(server.pid)
  await server.profileStart()
  const f = await scoreLoad(server, settings.seconds)
  const r = await server.profileStop(file)
  const threadsAfter = threadCpuMs(server.pid)
  const events = f.ok
  console.log(
    `\nprofile, ${engine.title} (${what}): ${events} events in ${r.transactions} transactions; CPU profile ${file}`,
  )
  console.log(
    `  ${'statement (wall time around the call)'.padEnd(92)} ${'calls'.padStart(7)} ${'us/call'.padStart(8)} ${'us/event'.padStart(9)}`,
  )
  for (const st of r.statements.slice(0, 40)) {
    console.log(
      `  ${st.sql.padEnd(92)} ${String(st.calls).padStart(7)} ${((st.totalMs * 1000) / st.calls).toFixed(0).padStart(8)} ${((st.totalMs * 1000) / Math.max(1, events)).toFixed(1).padStart(9)}`,
    )
  }
  console.log('  CPU per thread of the server process (us/event):')
  const threads = [...threadsAfter].map(([name, ms]) => [name, ms - (threadsBefore.get(name) ?? 0)] as const)
  for (const [name, ms] of threads.sort((a, b) => b[1] - a[1]).filter(([, ms]) => ms > 0)) {
    console.log(`    ${name.padEnd(30)} ${perEvent(ms, events)}`)
  }
}

export function scoreLoad(server: BenchServer, seconds: number, connections = 50): Promise<Figures> {
  // A fresh cycle each time: every measurement sends the same requests in the same order.
  return load({
    url: `http://127.0.0.1:${server.port}`,
    duration: seconds,
    connections,
    requests: cycling(scoreBodies(MIX), '/v1/score', { 'x-api-key': server.apiKey }),
  })
}

async function postBatch(server: BenchServer, rows: Record<string, unknown>[]): Promise<Response> {
  const res = await fetch(`http://127.0.0.1:${server.port}/v1/batch/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': server.apiKey },
    body: JSON.stringify({ rows }),
    signal: AbortSignal.timeout(300_000),
  })
  await res.arrayBuffer()
  return res
}

async function batchTimes(server: BenchServer): Promise<{ median: number; best: number }> {
  const rows = scoreBodies(BATCH_ROWS)
  const times: number[] = []
  for (let run = 0; run < 5; run++) {
    let t0 = performance.now()
    let res = await postBatch(server, rows)
    // A busy server sheds load with 503 (a client retries after Retry-After); time the answered try.
    for (let retry = 0; res.status === 503 && retry < 10; retry++) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)))
      t0 = performance.now()
      res = await postBatch(server, rows)
    }
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { median: Math.round(times[2]!), best: Math.round(times[0]!) }
}

/** Prints the engine's figures against the echo reference of this run; returns the targets' outcomes. */
export async function engineFigures(
  engine: Engine,
  server: BenchServer,
  ref: Figures,
  settings: RunSettings,
): Promise<Outcome[]> {
  const t = engine.targets
  const warm = await scoreLoad(server, WARM_UP_SECONDS)
  const note = settings.afterWarmUp ? await settings.afterWarmUp() : null
  console.log(
    `${engine.tag}warm-up: ${warm.ok} events in ${WARM_UP_SECONDS} s${note ? `, then ${note}` : ''}`,
  )
  const figures = await scoreFigures(engine, server, settings, engine.scoreLabel)
  const s = figures.saturation
  const ratio = s.reqPerSec / ref.reqPerSec
  console.log(
    `ratio ${engine.tag}POST /v1/score / reference: ${ratio.toFixed(2)}   (targets: ratio >= ${t.ratio}, p99 <= ${t.p99} ms)`,
  )
  const b = await batchTimes(server)
  console.log(
    `${engine.tag}${BATCH_ROWS}-row POST /v1/batch/score: median ${b.median} ms, best ${b.best} ms (target <= ${t.batchMs} ms)`,
  )
  await profileRun(engine, server, settings, 'young')
  const out: Outcome[] = [
    ...latencyOutcomes(engine, figures, settings.rate, ''),
    outcome(engine, 'score / echo', ratio.toFixed(2), `>= ${t.ratio}`, ratio >= t.ratio),
    outcome(engine, 'score p99', `${s.p99} ms`, `<= ${t.p99} ms`, s.p99 <= t.p99),
    outcome(engine, `${BATCH_ROWS}-row batch`, `${b.median} ms`, `<= ${t.batchMs} ms`, b.median <= t.batchMs),
  ]
  if (settings.history) out.push(...(await historyFigures(engine, server, settings)))
  return out
}

function latencyOutcomes(engine: Engine, f: ScoreFigures, rate: number, suffix: string): Outcome[] {
  const t = engine.targets
  const cpuTarget = suffix ? t.historyCpuUs : t.cpuUs
  const out = [
    outcome(
      engine,
      `CPU/event${suffix}`,
      `${f.saturationCpu.totalUs} us`,
      `<= ${cpuTarget} us`,
      f.saturationCpu.totalUs <= cpuTarget,
    ),
    outcome(
      engine,
      `Poisson ${rate} p99${suffix}`,
      `${f.arrivals.p99.toFixed(1)} ms`,
      `<= ${t.poissonP99} ms`,
      f.arrivals.p99 <= t.poissonP99,
    ),
  ]
  if (t.singleP50 !== null)
    out.push(
      outcome(
        engine,
        `single p50${suffix}`,
        `${f.single.p50.toFixed(1)} ms`,
        `<= ${t.singleP50} ms`,
        f.single.p50 <= t.singleP50,
      ),
    )
  return out
}

/**
 * The young figure is measured again right before the feed, so both sides of the ratio come from a
 * warmed-up server with the same requests, minutes apart rather than one cold and one warm.
 */
async function historyFigures(
  engine: Engine,
  server: BenchServer,
  settings: RunSettings,
): Promise<Outcome[]> {
  console.log(`\nhistory, ${engine.title} (the same request mix before and after the recording)`)
  const young = await scoreLoad(server, settings.seconds)
  console.log(row(engine.youngLabel, young))
  console.log(
    `recording ${settings.historyEvents} events of ${settings.historyPeople} people through POST /v1/batch/score (${BATCH_ROWS}-row batches, ${HISTORY_CONCURRENCY} in flight)`,
  )
  const h = await recordHistory(server, {
    events: settings.historyEvents,
    people: settings.historyPeople,
    name: engine.name,
  })
  console.log(
    `history recorded: ${h.events} events in ${h.seconds.toFixed(1)} s (${h.eventsPerSec} events/s), spread over ${h.days.toFixed(1)} simulated days, ${h.unavailable} batches answered 503 and were retried`,
  )
  const note = settings.afterHistory ? await settings.afterHistory() : null
  if (note) console.log(note)
  const after = await scoreFigures(engine, server, settings, engine.historyLabel)
  const old = after.saturation
  await profileRun(engine, server, settings, 'history')
  const ratio = old.reqPerSec / young.reqPerSec
  console.log(
    `ratio ${engine.tag}POST /v1/score with history / young database: ${ratio.toFixed(2)}   (target >= ${HISTORY_TARGET})`,
  )
  return [
    ...latencyOutcomes(engine, after, settings.rate, ' (hist)'),
    outcome(engine, 'history / young', ratio.toFixed(2), `>= ${HISTORY_TARGET}`, ratio >= HISTORY_TARGET),
  ]
}

function outcome(engine: Engine, what: string, value: string, target: string, met: boolean): Outcome {
  return { engine: engine.name, what, value, target, met }
}

export function summary(outcomes: Outcome[]): string {
  const lines = outcomes.map(
    (o) =>
      `  ${o.engine.padEnd(9)} ${o.what.padEnd(24)} ${o.value.padStart(8)}  target ${o.target.padEnd(10)} ${o.met ? 'met' : 'MISSED'}`,
  )
  return `targets\n${lines.join('\n')}`
}
