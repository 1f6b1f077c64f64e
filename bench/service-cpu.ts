/**
 * `node dist/bench/service-cpu.js [--sqlite] [events] [--profile FILE]`: CPU of this process per scored
 * event (app.inject, groups of 8 concurrent), after 1,000 warm-up events and, on PostgreSQL, an ANALYZE
 * of the fresh schema (autovacuum may be off: without it the generic plans scan whole partitions).
 * With --profile, a V8 CPU profile of the measured phase only, and its top self-time functions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, type Store } from '../src/store/index.js'
import { createBenchSchema } from './pg.js'
import { scoringApp } from './score-app.js'
import { scoreBodies } from './score-mix.js'

const URL = process.env['VERDICT_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const GROUP = 8

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount: number
}

function top(profile: { nodes: Node[]; samples: number[] }, n: number): string[] {
  const self = new Map<string, number>()
  for (const node of profile.nodes) {
    const f = node.callFrame
    const file = f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1')
    const key = `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + node.hitCount)
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
}

async function run(
  store: Store,
  events: number,
  profileFile: string | undefined,
  analyze?: () => Promise<void>,
) {
  const { post, close } = await scoringApp(store, 'cpu')
  const postAll = async (bodies: object[]) => {
    for (let i = 0; i < bodies.length; i += GROUP) {
      const res = await Promise.all(bodies.slice(i, i + GROUP).map(post))
      for (const r of res)
        if (r.statusCode !== 200) throw new Error(`score answered ${r.statusCode}: ${r.body}`)
    }
  }
  try {
    await postAll(scoreBodies(1000))
    if (analyze) await analyze()
    await postAll(scoreBodies(200))
    const session = new Session()
    if (profileFile) {
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.setSamplingInterval', { interval: 200 })
      await session.post('Profiler.start')
    }
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    await postAll(scoreBodies(events))
    const cpu = process.cpuUsage(cpu0)
    const ms = performance.now() - t0
    const lines = [
      `CPU/event ${((cpu.user + cpu.system) / events).toFixed(0)} us (user ${(cpu.user / events).toFixed(0)}, sys ${(cpu.system / events).toFixed(0)}), wall ${((ms * 1000) / events).toFixed(0)} us/event`,
    ]
    if (profileFile) {
      const { profile } = await session.post('Profiler.stop')
      session.disconnect()
      writeFileSync(profileFile, JSON.stringify(profile))
      lines.push(...top(profile as unknown as { nodes: Node[]; samples: number[] }, 30))
    }
    return lines.join('\n')
  } finally {
    await close()
  }
}

const args = process.argv.slice(2)
const sqlite = args.includes('--sqlite')
const pi = args.indexOf('--profile')
const profileFile = pi >= 0 ? args[pi + 1] : undefined
const events = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--profile') ?? 2000)
if (sqlite) {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-cpu-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'cpu.db') })
  try {
    console.log(`sqlite ${await run(store, events, profileFile)}`)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
} else {
  const bench = await createBenchSchema(URL)
  const store = await openStore({ kind: 'postgres', url: URL }, { pgSchema: bench.schema })
  try {
    console.log(`postgres ${await run(store, events, profileFile, bench.analyze)}`)
  } finally {
    await store.close()
    await bench.drop()
  }
}
process.exit(0)
