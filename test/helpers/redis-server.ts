import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { hasBinary } from './capabilities.js'

/** A free TCP port on loopback (bound and released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
  })
}

/**
 * A real redis-server of the test's own, on its own port, which the test may stop and start again (the
 * shared one at 6379 must stay up for the other tests). Keeps nothing on disk.
 */
export class OwnRedis {
  private proc: ChildProcess | null = null
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`
  }

  async start(): Promise<void> {
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    for (let i = 0; i < 100; i++) {
      const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
      c.on('error', () => {})
      try {
        await c.connect()
        await c.ping()
        return
      } catch {
        await new Promise((r) => setTimeout(r, 50))
      } finally {
        c.disconnect()
      }
    }
    throw new Error(`redis-server did not start on port ${this.port}`)
  }

  async stop(): Promise<void> {
    const p = this.proc
    this.proc = null
    if (!p || p.exitCode !== null) return
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve())
      p.kill('SIGKILL')
    })
  }
}

/** Whether a redis-server binary can be started by tests (CI fails when it cannot). */
export async function canRunRedisServer(): Promise<boolean> {
  return hasBinary('redis-server')
}
