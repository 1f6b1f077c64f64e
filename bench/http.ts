import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'

export interface Figures {
  reqPerSec: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

export interface BenchServer {
  port: number
  apiKey: string
  stop: () => void
}

export async function startBenchServer(kind: 'echo' | 'verdict'): Promise<BenchServer> {
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'servers.js'), kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    let buf = ''
    child.stdout?.on('data', (c: Buffer) => {
      buf += c.toString()
      const m = /READY .*\n/.exec(buf)
      if (m) resolve(m[0])
    })
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)))
  })
  const [, port, apiKey] = line.trim().split(' ')
  return { port: Number(port), apiKey: apiKey ?? '', stop: () => child.kill('SIGTERM') }
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
