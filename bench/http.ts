import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'
import type { FromServer, ServerSpec, ToServer } from './servers.js'

export interface Figures {
  reqPerSec: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Requests answered 2xx (the events scored, on the score route). */
  ok: number
}

export interface BenchServer {
  port: number
  /** The server process, for reading its memory from /proc. */
  pid: number
  apiKey: string
  /** Moves the server's clock forward to `at` (ms since the epoch); resolves once it has. */
  moveClock: (at: number) => Promise<void>
  /** `--profile` (verdict servers only): starts a CPU profile and statement timing. */
  profileStart: () => Promise<void>
  /** Ends the profile, which the server writes to `file`; returns the statement timings. */
  profileStop: (file: string) => Promise<Extract<FromServer, { type: 'profile' }>>
  /** Ends the process and waits for it to be gone (its database connections closed). */
  stop: () => Promise<void>
}

const START_TIMEOUT_MS = 120_000

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** `env`: extra environment of the server process (PGAPPNAME names its PostgreSQL connections). */
export async function startBenchServer(
  spec: ServerSpec,
  env: Record<string, string> = {},
): Promise<BenchServer> {
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'servers.js')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  })
  const send = (m: ToServer) => child.send(m)
  const stop = async () => {
    child.kill('SIGTERM')
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited(child)
    clearTimeout(t)
  }
  const ready = await new Promise<Extract<FromServer, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${spec.kind} server did not start`)), START_TIMEOUT_MS)
    child.on('message', (m: FromServer) => {
      if (m.type !== 'ready') return
      clearTimeout(timer)
      resolve(m)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${spec.kind} server exited with ${code}`))
    })
    send({ type: 'start', spec })
  }).catch(async (err) => {
    await stop()
    throw err
  })
  child.removeAllListeners('exit')
  // Requests of one kind are answered in order; a server that dies fails the ones still waiting.
  const waiters = new Map<
    FromServer['type'],
    { resolve: (m: FromServer) => void; reject: (e: Error) => void }[]
  >()
  child.on('message', (m: FromServer) => {
    waiters.get(m.type)?.shift()?.resolve(m)
  })
  child.once('exit', (code) => {
    for (const list of waiters.values())
      for (const w of list.splice(0)) w.reject(new Error(`${spec.kind} server exited with ${code}`))
  })
  const ask = <T extends FromServer['type']>(msg: ToServer, reply: T) =>
    new Promise<Extract<FromServer, { type: T }>>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`${spec.kind} server is gone`))
      const list = waiters.get(reply) ?? []
      waiters.set(reply, list)
      list.push({ resolve: resolve as (m: FromServer) => void, reject })
      send(msg)
    })
  return {
    port: ready.port,
    pid: child.pid ?? 0,
    apiKey: ready.apiKey,
    moveClock: (at) => ask({ type: 'clock', at }, 'clock-ok').then(() => {}),
    profileStart: () => ask({ type: 'profile-start' }, 'profile-started').then(() => {}),
    profileStop: (file) => ask({ type: 'profile-stop', file }, 'profile'),
    stop,
  }
}

export async function load(opts: autocannon.Options): Promise<Figures> {
  const r = await autocannon({ connections: 50, duration: 8, ...opts })
  return {
    reqPerSec: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    ok: r['2xx'],
  }
}

export function row(label: string, f: Figures): string {
  return `${label.padEnd(34)} ${String(f.reqPerSec).padStart(7)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms${f.errors || f.non2xx ? `   errors ${f.errors} non-2xx ${f.non2xx}` : ''}`
}
