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
}

export interface BenchServer {
  port: number
  /** The server process, for reading its memory from /proc. */
  pid: number
  apiKey: string
  /** Moves the server's clock forward to `at` (ms since the epoch); resolves once it has. */
  moveClock: (at: number) => Promise<void>
  /** Ends the process and waits for it to be gone (its database connections closed). */
  stop: () => Promise<void>
}

const START_TIMEOUT_MS = 120_000

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

export async function startBenchServer(spec: ServerSpec): Promise<BenchServer> {
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'servers.js')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
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
  // Clock moves are answered in order; a server that dies fails the ones still waiting.
  const waiters: { resolve: () => void; reject: (e: Error) => void }[] = []
  child.on('message', (m: FromServer) => {
    if (m.type === 'clock-ok') waiters.shift()?.resolve()
  })
  child.once('exit', (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`${spec.kind} server exited with ${code}`))
  })
  return {
    port: ready.port,
    pid: child.pid ?? 0,
    apiKey: ready.apiKey,
    moveClock: (at) =>
      new Promise<void>((resolve, reject) => {
        if (!child.connected) return reject(new Error(`${spec.kind} server is gone`))
        waiters.push({ resolve, reject })
        send({ type: 'clock', at })
      }),
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
  }
}

export function row(label: string, f: Figures): string {
  return `${label.padEnd(34)} ${String(f.reqPerSec).padStart(7)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms${f.errors || f.non2xx ? `   errors ${f.errors} non-2xx ${f.non2xx}` : ''}`
}
