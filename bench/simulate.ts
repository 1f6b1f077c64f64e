/**
 * What-if at full size: records 100,000 events of the benchmark population (2 % of them labelled),
 * then times POST /v1/config/simulate over all of them, on SQLite and
 * PostgreSQL (--pg URL or VERDICT_BENCH_PG; default the local test database). Prints the figures; the target is under 2 s per simulation.
 *
 *   npm run bench:simulate [-- --events N] [--pg postgres://…]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import { createTenant } from '../src/services/access/tenants.js'
import { openStore, type StorageTarget } from '../src/store/index.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'
import { createBenchSchema } from './pg.js'
import { historyBatches } from './population.js'

const ROWS = 1000
const LABELLED_EVERY = 50
const RUNS = 3

/** A clock the recording moves forward, so the events spread over hours like real traffic. */
function movingClock() {
  let at = Date.now() - 30 * 86_400_000
  return { now: () => at, advance: (ms: number) => (at += ms) }
}

async function run(name: string, target: StorageTarget, events: number, pgSchema?: string): Promise<void> {
  const store = await openStore(target, pgSchema ? { pgSchema } : {})
  const dns = await startBenchDns()
  const clock = movingClock()
  const intel = await loadIntel({
    feedsDir: loadSettings().feeds.dir,
    email: { mx: { servers: [dns.server] } },
  })
  const app = await buildApp({ store, clock, hasher: new Hasher('bench-secret'), intel })
  const { apiKey } = await createTenant(store, clock, {
    name: 'bench',
    rateLimit: 1_000_000_000,
    monthlyQuota: 1_000_000_000,
  })
  const headers = { 'x-api-key': apiKey }
  try {
    const t0 = performance.now()
    let done = 0
    for (const rows of historyBatches(events, Math.ceil(events / 5), ROWS)) {
      const res = await app.inject({ method: 'POST', url: '/v1/batch/score', headers, payload: { rows } })
      if (res.statusCode !== 200) throw new Error(`batch answered ${res.statusCode}: ${res.body}`)
      const results = res.json().results as { event_id: string; verdict: string }[]
      for (const [i, r] of results.entries()) {
        if ((done + i) % LABELLED_EVERY !== 0) continue
        const label = r.verdict === 'allow' ? 'legit' : 'fraud'
        await app.inject({
          method: 'POST',
          url: '/v1/label',
          headers,
          payload: { label, event_id: r.event_id },
        })
      }
      done += results.length
      clock.advance(60_000)
      if (done % 20_000 === 0) process.stderr.write(`${name}: recorded ${done} / ${events} events\n`)
    }
    const recordS = (performance.now() - t0) / 1000
    process.stderr.write(`${name}: recorded ${done} events in ${recordS.toFixed(1)} s\n`)
    const times: number[] = []
    let last: { events: number; changed: number; labelled: { events: number } } | undefined
    for (let i = 0; i < RUNS; i++) {
      const s0 = performance.now()
      const res = await app.inject({
        method: 'POST',
        url: '/v1/config/simulate',
        headers,
        payload: {
          limit: events,
          weights: { datacenterIp: 60, deviceReuseMed: 45 },
          thresholds: { review: 25, block: 55 },
        },
      })
      times.push(performance.now() - s0)
      if (res.statusCode !== 200) throw new Error(`simulate answered ${res.statusCode}: ${res.body}`)
      last = res.json()
    }
    const best = Math.min(...times)
    console.log(
      `${name}: simulate over ${last?.events} events (${last?.labelled.events} labelled, ${last?.changed} changed): ` +
        `${times.map((t) => (t / 1000).toFixed(2)).join(' / ')} s (best ${(best / 1000).toFixed(2)} s; target < 2 s)`,
    )
  } finally {
    await app.close()
    await store.close()
    dns.stop()
  }
}

const { values } = parseArgs({
  options: { events: { type: 'string', default: '100000' }, pg: { type: 'string' } },
  strict: true,
})
const events = Number(values.events)
const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-simulate-'))
try {
  await run('sqlite', { kind: 'sqlite', file: join(dir, 'verdict.db') }, events)
  const pgUrl = values.pg ?? process.env['VERDICT_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'
  if (pgUrl) {
    const schema = await createBenchSchema(pgUrl)
    try {
      await run('postgres', { kind: 'postgres', url: pgUrl }, events, schema.schema)
    } finally {
      await schema.drop()
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
