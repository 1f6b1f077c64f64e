/**
 * Idle CPU of a SQLite server, young and after a recorded history (issue 29): a time series of the
 * server's CPU per second, per thread, while nothing is sent to it.
 *
 *   npm run bench:idle -- [--history-events N] [--history-people N] [--seconds S] [--young-seconds S]
 *                         [--window W] [--jobs]
 *                         [--profile-dir DIR] [--keep]
 *
 * `--jobs` runs the background jobs and the webhook dispatcher as server.ts does (the main bench does
 * not); their runs are printed with their wall time. `--profile-dir` takes a V8 CPU profile of the idle
 * period after the history. `--keep` leaves the database file behind and prints where it is.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { threadCpuMs } from './cpu.js'
import { scoreLoad } from './engine.js'
import { historyClockStart, recordHistory } from './history.js'
import { type BenchServer, startBenchServer } from './http.js'

const { values } = parseArgs({
  options: {
    'history-events': { type: 'string', default: '150000' },
    'history-people': { type: 'string', default: '50000' },
    seconds: { type: 'string', default: '60' },
    'young-seconds': { type: 'string' },
    window: { type: 'string', default: '5' },
    jobs: { type: 'boolean', default: false },
    'profile-dir': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
})
const events = Number(values['history-events'])
const people = Number(values['history-people'])
const seconds = Number(values.seconds)
const youngSeconds = Number(values['young-seconds'] ?? values.seconds)
const windowS = Number(values.window)

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Start time of a thread in clock ticks since boot (field 22 of its stat). */
function startTicks(path: string): number {
  try {
    const text = readFileSync(path, 'utf8')
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19])
  } catch {
    return 0
  }
}

/**
 * Threads all carry the name "node": the main thread is the one whose id is the pid; the others are
 * told apart by when they started after the process (the checkpoint worker starts at the first write,
 * after V8's and libuv's threads).
 */
function threadLabels(pid: number, names: Iterable<string>): Map<string, string> {
  const t0 = startTicks(`/proc/${pid}/stat`)
  const out = new Map<string, string>()
  for (const name of names) {
    const tid = Number(/\((\d+)\)$/.exec(name)?.[1])
    if (tid === pid) out.set(name, 'main')
    else out.set(name, `${tid} (+${((startTicks(`/proc/${pid}/task/${tid}/stat`) - t0) / 100).toFixed(2)} s)`)
  }
  return out
}

/** Per-window CPU per second of each thread (by tid) and of the process, for `seconds`. */
async function idleSeries(server: BenchServer, label: string, seconds: number): Promise<void> {
  console.log(`\n${label}: idle CPU, ms per second, ${windowS} s windows (load average at the end of each)`)
  const totals = new Map<string, number>()
  let before = threadCpuMs(server.pid)
  for (let t = 0; t < seconds; t += windowS) {
    await sleep(windowS * 1000)
    const after = threadCpuMs(server.pid)
    const parts: string[] = []
    let sum = 0
    for (const [name, ms] of after) {
      const d = ms - (before.get(name) ?? 0)
      sum += d
      totals.set(name, (totals.get(name) ?? 0) + d)
      if (d > 0) parts.push(`${name} ${(d / windowS).toFixed(0)}`)
    }
    console.log(
      `  ${String(t + windowS).padStart(4)} s: ${(sum / windowS).toFixed(1).padStart(6)} ms/s   [${parts.join(', ')}]   load ${loadavg()}`,
    )
    before = after
  }
  const all = [...totals].sort((a, b) => b[1] - a[1]).filter(([, ms]) => ms > 0)
  const sum = all.reduce((s, [, ms]) => s + ms, 0)
  const labels = threadLabels(server.pid, totals.keys())
  console.log(
    `  mean over ${seconds} s: ${(sum / seconds).toFixed(1)} ms/s; per thread (started after the process):`,
  )
  for (const [name, ms] of all)
    console.log(`    ${(labels.get(name) ?? name).padEnd(28)} ${(ms / seconds).toFixed(1)} ms/s`)
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-idle-'))
  const server = await startBenchServer({
    kind: 'verdict',
    target: { kind: 'sqlite', file: join(dir, 'bench.db') },
    clockStartMs: historyClockStart(events),
    ...(values.keep ? {} : { scratchDir: dir }),
    jobs: values.jobs,
  })
  try {
    const warm = await scoreLoad(server, 3)
    console.log(`warm-up: ${warm.ok} events in 3 s${values.jobs ? ' (background jobs on)' : ''}`)
    await idleSeries(server, 'young', youngSeconds)
    const h = await recordHistory(server, { events, people, name: 'sqlite' })
    console.log(
      `\nhistory: ${h.events} events in ${h.seconds.toFixed(0)} s (${h.days.toFixed(1)} simulated days)`,
    )
    const profileDir = values['profile-dir']
    if (profileDir) await server.profileStart()
    await idleSeries(server, `after ${events} events`, seconds)
    if (profileDir) {
      mkdirSync(resolve(profileDir), { recursive: true })
      const file = join(resolve(profileDir), `idle-${Date.now()}.cpuprofile`)
      await server.profileStop(file)
      console.log(`CPU profile of the idle period: ${file}`)
    }
  } finally {
    await server.stop()
    if (values.keep) console.log(`database kept: ${join(dir, 'bench.db')}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
