/**
 * `npm run soak -- [--seconds 120] [--rate 400] [--pg]`: the real server under a steady rate of
 * realistic score requests for a long run (not in CI). Prints, per 10 s window, the throughput, p50
 * and p99 latency and errors, and the server's RSS at the start and the end. The goals it reports
 * against: 0 errors, RSS growth under 20 %, p99 flat (last window within 2x the first).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { startBenchServer } from './http.js'
import { scoreBodies } from './score-mix.js'

const WINDOW_MS = 10_000

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN
}

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0

async function main() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      seconds: { type: 'string', default: '120' },
      rate: { type: 'string', default: '400' },
      pg: { type: 'boolean', default: false },
    },
    strict: true,
  })
  const seconds = Number(values.seconds)
  const rate = Number(values.rate)
  if (!Number.isInteger(seconds) || seconds < 10 || !Number.isInteger(rate) || rate < 1) {
    throw new Error('--seconds takes a whole number >= 10, --rate a whole number >= 1')
  }
  const dir = mkdtempSync(join(tmpdir(), 'verdict-soak-'))
  const pgUrl = process.env['VERDICT_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'
  const schema = `soak_${process.pid}`
  if (values.pg) {
    const c = new pg.Client({ connectionString: pgUrl })
    await c.connect()
    await c.query(`CREATE SCHEMA ${schema}`)
    await c.end()
  }
  const server = await startBenchServer(
    values.pg
      ? { kind: 'verdict', target: { kind: 'postgres', url: pgUrl }, pgSchema: schema }
      : { kind: 'verdict', target: { kind: 'sqlite', file: join(dir, 'soak.db') }, scratchDir: dir },
  )
  try {
    const bodies = scoreBodies(20_000).map((b) => JSON.stringify(b))
    let next = 0
    const rssStart = rssMb(server.pid)
    console.log(
      `soak: ${values.pg ? 'PostgreSQL' : 'SQLite'}, ${rate} req/s for ${seconds} s, POST /v1/score; server RSS at start ${rssStart} MB`,
    )
    console.log('window    req/s   p50 ms   p99 ms   errors   non-2xx   RSS MB')
    const windows: { latencies: number[]; errors: number; non2xx: number }[] = []
    const started = Date.now()
    const windowOf = () => {
      const i = Math.floor((Date.now() - started) / WINDOW_MS)
      while (windows.length <= i) windows.push({ latencies: [], errors: 0, non2xx: 0 })
      return windows[i]!
    }
    let printed = 0
    const print = (upTo: number) => {
      for (; printed < upTo && printed < windows.length; printed++) {
        const w = windows[printed]!
        const sorted = [...w.latencies].sort((a, b) => a - b)
        console.log(
          `${String(printed * 10).padStart(4)}-${String(printed * 10 + 10).padEnd(4)} ${String(Math.round(w.latencies.length / (WINDOW_MS / 1000))).padStart(6)} ${pct(sorted, 50).toFixed(1).padStart(8)} ${pct(sorted, 99).toFixed(1).padStart(8)} ${String(w.errors).padStart(8)} ${String(w.non2xx).padStart(9)} ${String(rssMb(server.pid)).padStart(8)}`,
        )
      }
    }
    const ticker = setInterval(() => print(Math.floor((Date.now() - started) / WINDOW_MS)), 1000)
    let finish: (r: autocannon.Result) => void = () => {}
    let fail: (e: Error) => void = () => {}
    const done = new Promise<autocannon.Result>((resolve, reject) => {
      finish = resolve
      fail = reject
    })
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${server.port}/v1/score`,
        method: 'POST',
        headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json' },
        connections: 20,
        overallRate: rate,
        duration: seconds,
        requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
      },
      (err, result) => (err ? fail(err) : finish(result)),
    )
    instance.on('response', (_client, status: number, _bytes, ms: number) => {
      const w = windowOf()
      w.latencies.push(ms)
      if (status >= 300) w.non2xx++
    })
    instance.on('reqError', () => {
      windowOf().errors++
    })
    const result = await done
    clearInterval(ticker)
    print(windows.length)
    const rssEnd = rssMb(server.pid)
    const growth = ((rssEnd - rssStart) / rssStart) * 100
    // The last window may hold only the run's final requests: judge full windows only.
    const full = windows.filter((w) => w.latencies.length >= (rate * WINDOW_MS) / 2000)
    const p99s = full.map((w) =>
      pct(
        [...w.latencies].sort((a, b) => a - b),
        99,
      ),
    )
    const errors = result.errors + result.non2xx
    console.log(
      `\ntotal ${result.requests.total} requests, ${Math.round(result.requests.average)} req/s, errors ${result.errors}, non-2xx ${result.non2xx}`,
    )
    console.log(`RSS ${rssStart} MB -> ${rssEnd} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} %)`)
    console.log(`p99 first window ${p99s[0]?.toFixed(1)} ms, last ${p99s.at(-1)?.toFixed(1)} ms`)
    const flat = p99s.length < 2 || p99s.at(-1)! <= 2 * Math.max(p99s[0]!, 5)
    console.log(
      `goals: errors 0 ${errors === 0 ? 'met' : 'MISSED'}; RSS growth < 20 % ${growth < 20 ? 'met' : 'MISSED'}; p99 flat ${flat ? 'met' : 'MISSED'}`,
    )
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
    if (values.pg) {
      const c = new pg.Client({ connectionString: pgUrl })
      await c.connect()
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await c.end()
    }
  }
}

await main()
