/**
 * `node dist/bench/observability.js`: the cost of request logs, metrics and tracing on the scoring
 * path, in CPU time per scored event (process.cpuUsage, less sensitive to a busy machine than
 * wall-clock throughput). Each variant runs in a child process of its own (tracing registers global
 * state), the variants alternate over several rounds, and the median per variant is printed:
 * - `baseline`: what the server did before (no per-request log line, no metrics, no tracing);
 * - `metrics`: one log line per request at info (written to /dev/null) and Prometheus metrics;
 * - `tracing`: the same with OpenTelemetry spans exported to a loopback OTLP/HTTP collector.
 * Flags: --events N (per round, default 2000), --rounds N (default 5).
 */
import { fork } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import { Metrics } from '../src/observability/metrics.js'
import { Tracing } from '../src/observability/tracing.js'
import { createTenant } from '../src/services/access/tenants.js'
import { openStore } from '../src/store/index.js'
import { systemClock } from '../src/util/clock.js'
import { Hasher } from '../src/util/secrets.js'

type Variant = 'baseline' | 'metrics' | 'tracing'
const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}

async function collector(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  server.unref()
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

/** One round in this process: µs of CPU per scored event. */
async function round(variant: Variant, events: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-obs-bench-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'verdict.db') })
  const intel = await loadIntel({ feedsDir: loadSettings().feeds.dir })
  const tracing = variant === 'tracing' ? Tracing.start(await collector(), 'bench') : undefined
  const metrics = variant === 'baseline' ? undefined : new Metrics(tracing ? { span: tracing.span } : {})
  const app = await buildApp({
    store,
    clock: systemClock,
    hasher: new Hasher('bench-secret-0123456789abcdef0123456789'),
    intel,
    ...(metrics ? { signals: metrics } : {}),
    logger: { level: variant === 'baseline' ? 'warn' : 'info', stream: createWriteStream('/dev/null') },
    observability: { metrics, tracing },
  })
  const { apiKey } = await createTenant(store, systemClock, {
    name: 'bench',
    rateLimit: 1_000_000_000,
    monthlyQuota: 1_000_000_000,
  })
  const headers = { 'x-api-key': apiKey, 'x-request-id': 'bench-1' }
  const score = (i: number) =>
    app.inject({
      method: 'POST',
      url: '/v1/score',
      headers: { ...headers, traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` },
      payload: { event: 'signup', ip: `198.51.${(i >> 8) & 255}.${i & 255}`, user_id: `u${i % 500}` },
    })
  // Warm-up, then 50 events at a time in flight (they share group commits, as under load).
  for (let i = 0; i < 200; i++) await score(i)
  const before = process.cpuUsage()
  for (let i = 0; i < events; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => score(i + j)))
  const used = process.cpuUsage(before)
  await app.close()
  await tracing?.shutdown()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  return (used.user + used.system) / events
}

function child(variant: Variant, events: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = fork(import.meta.filename, ['--child', variant, '--events', String(events)])
    c.once('message', (m) => resolve(m as number))
    c.once('exit', (code) => code !== 0 && reject(new Error(`${variant} exited with ${code}`)))
  })
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

if (process.argv.includes('--child')) {
  const variant = process.argv[process.argv.indexOf('--child') + 1] as Variant
  const us = await round(variant, flag('events', 2000))
  process.send?.(us)
  process.exit(0)
} else {
  const events = flag('events', 2000)
  const rounds = flag('rounds', 5)
  const results: Record<Variant, number[]> = { baseline: [], metrics: [], tracing: [] }
  for (let r = 0; r < rounds; r++)
    for (const v of ['baseline', 'metrics', 'tracing'] as const) results[v].push(await child(v, events))
  const base = median(results.baseline)
  console.log(`CPU per scored event (median of ${rounds} rounds of ${events} events, app.inject)`)
  for (const v of ['baseline', 'metrics', 'tracing'] as const) {
    const m = median(results[v])
    const all = results[v].map((x) => x.toFixed(0)).join(' ')
    console.log(
      `  ${v.padEnd(9)} ${m.toFixed(0).padStart(6)} µs  (${((m / base - 1) * 100).toFixed(1)}%)  [${all}]`,
    )
  }
}
