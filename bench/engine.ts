/** Score and batch figures of one storage engine, and the history mode's before/after comparison. */
import type autocannon from 'autocannon'
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
  targets: { ratio: number; p99: number; batchMs: number }
}

export const SQLITE: Engine = {
  name: 'sqlite',
  title: 'SQLite',
  scoreLabel: 'verdict: POST /v1/score (mixed)',
  youngLabel: 'verdict: POST /v1/score (young)',
  historyLabel: 'verdict: POST /v1/score (history)',
  tag: '',
  targets: { ratio: 0.35, p99: 20, batchMs: 150 },
}

export const POSTGRES: Engine = {
  name: 'postgres',
  title: 'PostgreSQL',
  scoreLabel: 'postgres: POST /v1/score (mixed)',
  youngLabel: 'postgres: POST /v1/score (young)',
  historyLabel: 'postgres: POST /v1/score (history)',
  tag: 'postgres ',
  targets: { ratio: 0.15, p99: 50, batchMs: 400 },
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
  /** Runs just before the second measurement (PostgreSQL refreshes its planner statistics). */
  afterHistory?: () => Promise<string | null>
}

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

/** The echo server's validated-JSON reference, measured with the same request mix. */
export async function scoreReference(echoPort: number, seconds: number): Promise<Figures> {
  return load({
    url: `http://127.0.0.1:${echoPort}`,
    duration: seconds,
    requests: cycling(scoreBodies(MIX), '/echo-score', {}),
  })
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

async function batchTimes(server: BenchServer): Promise<{ median: number; best: number }> {
  const rows = scoreBodies(BATCH_ROWS)
  const times: number[] = []
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now()
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/batch/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.apiKey },
      body: JSON.stringify({ rows }),
      signal: AbortSignal.timeout(300_000),
    })
    await res.arrayBuffer()
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
  const s = await scoreLoad(server, settings.seconds)
  console.log(row(engine.scoreLabel, s))
  const ratio = s.reqPerSec / ref.reqPerSec
  console.log(
    `ratio ${engine.tag}POST /v1/score / reference: ${ratio.toFixed(2)}   (targets: ratio >= ${t.ratio}, p99 <= ${t.p99} ms)`,
  )
  const b = await batchTimes(server)
  console.log(
    `${engine.tag}${BATCH_ROWS}-row POST /v1/batch/score: median ${b.median} ms, best ${b.best} ms (target <= ${t.batchMs} ms)`,
  )
  const out: Outcome[] = [
    outcome(engine, 'score / echo', ratio.toFixed(2), `>= ${t.ratio}`, ratio >= t.ratio),
    outcome(engine, 'score p99', `${s.p99} ms`, `<= ${t.p99} ms`, s.p99 <= t.p99),
    outcome(engine, `${BATCH_ROWS}-row batch`, `${b.median} ms`, `<= ${t.batchMs} ms`, b.median <= t.batchMs),
  ]
  if (settings.history) out.push(await historyFigures(engine, server, settings))
  return out
}

/**
 * The young figure is measured again right before the feed, so both sides of the ratio come from a
 * warmed-up server with the same requests, minutes apart rather than one cold and one warm.
 */
async function historyFigures(engine: Engine, server: BenchServer, settings: RunSettings): Promise<Outcome> {
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
  const old = await scoreLoad(server, settings.seconds)
  console.log(row(engine.historyLabel, old))
  const ratio = old.reqPerSec / young.reqPerSec
  console.log(
    `ratio ${engine.tag}POST /v1/score with history / young database: ${ratio.toFixed(2)}   (target >= ${HISTORY_TARGET})`,
  )
  return outcome(engine, 'history / young', ratio.toFixed(2), `>= ${HISTORY_TARGET}`, ratio >= HISTORY_TARGET)
}

function outcome(engine: Engine, what: string, value: string, target: string, met: boolean): Outcome {
  return { engine: engine.name, what, value, target, met }
}

export function summary(outcomes: Outcome[]): string {
  const lines = outcomes.map(
    (o) =>
      `  ${o.engine.padEnd(9)} ${o.what.padEnd(16)} ${o.value.padStart(8)}  target ${o.target.padEnd(9)} ${o.met ? 'met' : 'MISSED'}`,
  )
  return `targets\n${lines.join('\n')}`
}
