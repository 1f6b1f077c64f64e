import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')

export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'verdict.mjs'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
    timeout: 60_000,
  })
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}

/** Like runCli, but leaves this process's event loop free (for tests that serve the CLI over loopback). */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'verdict.mjs'), ...args], {
      env: { ...process.env, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    child.once('close', (code) => resolve({ status: code ?? -1, stdout, stderr }))
  })
}

export interface RunningServer {
  url: string
  /** stdout and stderr, interleaved as they arrived. */
  logs: () => string
  /** The structured (pino) log alone. */
  stdout: () => string
  /** What the server wrote to the terminal outside the structured log. */
  stderr: () => string
  stop: () => Promise<void>
  /** Sends a signal and resolves with the exit code (null when killed by a signal). */
  signal: (sig: NodeJS.Signals) => Promise<number | null>
  /** Whether the process is still running. */
  alive: () => boolean
}

/** Starts the compiled server on a free port and waits for its "listening" log line. */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'server.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  let out = ''
  let err = ''
  let exitCode: number | null | undefined
  child.once('exit', (code) => {
    exitCode = code
  })
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString()
  })
  // Below info the "listening" line is not logged: such a test passes a PORT and the health route is polled.
  const quiet = env.LOG_LEVEL !== undefined && !['info', 'debug', 'trace'].includes(env.LOG_LEVEL)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs}`)), 30_000)
    const onData = (chunk: Buffer) => {
      logs += chunk.toString()
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs)
      if (m?.[1]) {
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    if (quiet) {
      const base = `http://127.0.0.1:${env.PORT}`
      const poll = (): void =>
        void fetch(`${base}/v1/health`).then(
          () => {
            clearTimeout(timer)
            resolve(base)
          },
          () => {
            if (exitCode === undefined) setTimeout(poll, 50)
          },
        )
      poll()
    }
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${logs}`))
    })
  })
  return {
    url,
    logs: () => logs,
    stdout: () => out,
    stderr: () => err,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exitCode !== undefined) return resolve()
        child.removeAllListeners('exit')
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
    signal: (sig) =>
      new Promise<number | null>((resolve) => {
        if (exitCode !== undefined) return resolve(exitCode)
        child.removeAllListeners('exit')
        child.once('exit', (code) => {
          exitCode = code
          resolve(code)
        })
        child.kill(sig)
      }),
    alive: () => exitCode === undefined,
  }
}

/** The API key a first start shows on the terminal (stderr), if it did. */
export function firstStartKey(text: string): string | undefined {
  return /^verdict: .*\b(vk_[A-Za-z0-9]{40})\b/m.exec(text)?.[1]
}

/** A TCP port free at this moment on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

/** Runs an ES-module script in a child Node process; resolves with its stdout, rejects on a non-zero exit. */
export function runModuleScript(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script])
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString()
    })
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))))
  })
}
