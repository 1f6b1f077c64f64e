import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

/** Starts the compiled server on a fresh database and reports time-to-listening and resident memory. */
export async function benchStartup(): Promise<{ startMs: number; rssMb: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-start-'))
  const t0 = performance.now()
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'src', 'server.js')], {
    env: {
      ...process.env,
      PORT: '0',
      DATABASE_URL: join(dir, 'v.db'),
      VERDICT_FEEDS_DIR: join(dir, 'feeds'),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    let buf = ''
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString()
      if (buf.includes('Server listening')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  const startMs = performance.now() - t0
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  child.removeAllListeners('exit')
  child.kill('SIGTERM')
  return { startMs: Math.round(startMs), rssMb: Math.round(rssKb / 1024) }
}
