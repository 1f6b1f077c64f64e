import { performance } from 'node:perf_hooks'
import type { BenchServer } from './http.js'
import { historyBatches } from './population.js'

/** The batch endpoint's limit (BatchScoreBody in src/schemas/score.ts). */
export const BATCH_ROWS = 1000
/** Batches in flight at once. */
export const HISTORY_CONCURRENCY = 4
/** The simulated traffic the history represents; sets how far apart in time its events are. */
const EVENTS_PER_DAY = 20_000
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** One batch answering slower than this ends the run (nothing else bounds a stuck server). */
const BATCH_TIMEOUT_MS = 300_000

export interface HistoryLoad {
  events: number
  seconds: number
  eventsPerSec: number
  days: number
  /** Batches answered 503 (storage busy) and retried. */
  unavailable: number
}

/** Simulated time the history covers. */
export function historySpanMs(events: number): number {
  return Math.ceil(events / BATCH_ROWS) * (BATCH_ROWS / EVENTS_PER_DAY) * DAY_MS
}

/**
 * Where the server's clock starts in history mode: far enough back that the young measurement happens
 * before the history, which then ends an hour before the present, when the second measurement runs.
 */
export function historyClockStart(events: number, now = Date.now()): number {
  return now - historySpanMs(events) - 2 * HOUR_MS
}

/**
 * Records the population through POST /v1/batch/score, moving the server's clock forward before each
 * batch so the events spread over days, then sets the clock back to the present.
 */
export async function recordHistory(
  server: BenchServer,
  opts: { events: number; people: number; name: string },
): Promise<HistoryLoad> {
  const batches = historyBatches(opts.events, opts.people, BATCH_ROWS)
  const stepMs = (BATCH_ROWS / EVENTS_PER_DAY) * DAY_MS
  const simStart = Date.now() - historySpanMs(opts.events) - HOUR_MS
  // A progress line every ~50k events (every tenth of the feed for small runs).
  const every = Math.max(BATCH_ROWS, Math.min(50_000, Math.round(opts.events / 10 / BATCH_ROWS) * BATCH_ROWS))
  const url = `http://127.0.0.1:${server.port}/v1/batch/score`
  const t0 = performance.now()
  let index = 0
  let done = 0
  let nextReport = every
  let failed = false
  let unavailable = 0

  async function worker(): Promise<void> {
    while (!failed) {
      const next = batches.next()
      if (next.done) return
      const rows = next.value
      await server.moveClock(simStart + index++ * stepMs)
      const body = JSON.stringify({ rows })
      let res: Response
      let text: string
      for (;;) {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': server.apiKey },
          body,
          signal: AbortSignal.timeout(BATCH_TIMEOUT_MS),
        })
        text = await res.text()
        // A client would retry a 503 after Retry-After; the run does too, and reports how often.
        if (res.status !== 503) break
        unavailable++
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)))
      }
      if (res.status !== 200) throw new Error(`history batch answered ${res.status}: ${text.slice(0, 300)}`)
      done += rows.length
      if (done >= nextReport || done === opts.events) {
        const s = (performance.now() - t0) / 1000
        const rate = done / s
        process.stderr.write(
          `  history ${opts.name}: ${done}/${opts.events} events, ${Math.round(rate)} events/s, ${Math.round(s)} s, eta ${Math.round((opts.events - done) / rate)} s\n`,
        )
        while (nextReport <= done) nextReport += every
      }
    }
  }

  await Promise.all(
    Array.from({ length: HISTORY_CONCURRENCY }, () =>
      worker().catch((err) => {
        failed = true
        throw err
      }),
    ),
  )
  await server.moveClock(Date.now())
  const seconds = (performance.now() - t0) / 1000
  return {
    events: done,
    seconds,
    eventsPerSec: Math.round(done / seconds),
    days: historySpanMs(opts.events) / DAY_MS,
    unavailable,
  }
}
