/**
 * `node dist/bench/ab-builds.js DIST_A DIST_B [events] [--sqlite]`: two builds (two `dist/` directories,
 * e.g. a copy of main's and this worktree's) scoring in this one process, each on its own fresh
 * PostgreSQL schema (VERDICT_BENCH_PG; VERDICT_BENCH_PG_A / _B to give one build another URL) or SQLite
 * file, the same mix in groups of 8, A's and B's groups interleaved (ABBA). Prints this process's CPU
 * per event of each build and their ratio. On a shared 2-core machine, runs a minute apart differ by
 * ±20 %; groups interleaved within one process see the same load, so a few % shows (an A/A run gives
 * the noise: about ±3 %). Warm-up: 1,000 events each, then ANALYZE (see service-cpu.ts), 200 more.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const URL = process.env['VERDICT_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const GROUP = 8

type Post = (b: object) => Promise<{ statusCode: number; body: string }>
interface Build {
  post: Post
  close: () => Promise<void>
  cpu: number
  events: number
}

/** Imports a module of the build at `dist` (its own module instances: nothing is shared with the other). */
function from<T>(dist: string, path: string): Promise<T> {
  return import(pathToFileURL(join(resolve(dist), path)).href) as Promise<T>
}

async function open(dist: string, url: string, sqlite: boolean) {
  const { openStore } = await from<typeof import('../src/store/index.js')>(dist, 'src/store/index.js')
  const { scoringApp } = await from<typeof import('./score-app.js')>(dist, 'bench/score-app.js')
  const { createBenchSchema } = await from<typeof import('./pg.js')>(dist, 'bench/pg.js')
  const dir = sqlite ? mkdtempSync(join(tmpdir(), 'verdict-ab-')) : null
  const bench = sqlite ? null : await createBenchSchema(url)
  const store = dir
    ? await openStore({ kind: 'sqlite', file: join(dir, 'ab.db') })
    : await openStore({ kind: 'postgres', url }, { pgSchema: bench!.schema })
  const app = await scoringApp(store, 'ab')
  const build: Build = {
    post: app.post,
    close: async () => {
      await app.close()
      await store.close()
      await bench?.drop()
      if (dir) rmSync(dir, { recursive: true, force: true })
    },
    cpu: 0,
    events: 0,
  }
  return { build, analyze: bench ? bench.analyze : async () => {} }
}

async function group(b: Build, bodies: object[]): Promise<void> {
  const cpu0 = process.cpuUsage()
  const res = await Promise.all(bodies.map(b.post))
  const cpu = process.cpuUsage(cpu0)
  b.cpu += cpu.user + cpu.system
  b.events += bodies.length
  for (const r of res) if (r.statusCode !== 200) throw new Error(`score answered ${r.statusCode}: ${r.body}`)
}

/** The bodies in groups, A then B on even groups and B then A on odd ones. */
async function phase(a: Build, b: Build, bodies: object[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += GROUP) {
    const g = bodies.slice(i, i + GROUP)
    const [first, second] = (i / GROUP) % 2 === 0 ? [a, b] : [b, a]
    await group(first, g)
    await group(second, g)
  }
}

const args = process.argv.slice(2)
const sqlite = args.includes('--sqlite')
const [distA, distB, n = '2000'] = args.filter((x) => x !== '--sqlite')
if (!distA || !distB) throw new Error('usage: ab-builds.js DIST_A DIST_B [events] [--sqlite]')
const { scoreBodies } = await from<typeof import('./score-mix.js')>(distA, 'bench/score-mix.js')
const A = await open(distA, process.env['VERDICT_BENCH_PG_A'] ?? URL, sqlite)
const B = await open(distB, process.env['VERDICT_BENCH_PG_B'] ?? URL, sqlite)
try {
  await phase(A.build, B.build, scoreBodies(1000))
  await A.analyze()
  await B.analyze()
  await phase(A.build, B.build, scoreBodies(200))
  for (const b of [A.build, B.build]) {
    b.cpu = 0
    b.events = 0
  }
  await phase(A.build, B.build, scoreBodies(Number(n)))
  const per = (b: Build) => `${(b.cpu / b.events).toFixed(0)} us`
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
  console.log(
    `CPU/event: A ${per(A.build)}, B ${per(B.build)}, B/A ${(B.build.cpu / A.build.cpu).toFixed(3)} (load ${load})`,
  )
} finally {
  await A.build.close()
  await B.build.close()
}
process.exit(0)
