import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'
import { testCertificate } from './tls-app.js'

const ROOT = join(import.meta.dirname, '..', '..')

let cert: Awaited<ReturnType<typeof testCertificate>>
let other: Awaited<ReturnType<typeof testCertificate>>
beforeAll(async () => {
  ;[cert, other] = await Promise.all([testCertificate(), testCertificate()])
})
afterAll(() => {
  cert?.remove()
  other?.remove()
})

/**
 * Starts the compiled server and resolves when it logs its listen line (then `url` is set) or exits
 * (then `exitCode` is set); `stop` ends it.
 */
function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'server.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: join(cert.dir, 'verdict.db'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  let exited: (code: number | null) => void = () => {}
  const exit = new Promise<number | null>((r) => {
    exited = r
  })
  child.once('exit', (code) => exited(code))
  return new Promise<{
    url?: string
    exitCode?: number | null
    logs: () => string
    stop: () => void
    exit: Promise<number | null>
  }>((resolve) => {
    const result = { logs: () => logs, stop: () => child.kill('SIGTERM'), exit }
    const onData = (chunk: Buffer) => {
      logs += chunk.toString()
      const m = /Server listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(logs)
      if (m?.[1]) resolve({ ...result, url: m[1] })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => resolve({ ...result, exitCode: code }))
  })
}

function getJson(url: string, ca: Buffer, agent?: Agent): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: [ca], servername: 'localhost', ...(agent ? { agent } : {}) }, (res) => {
      let body = ''
      res.on('data', (c) => {
        body += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('the server with TLS_CERT_FILE and TLS_KEY_FILE', () => {
  it('serves HTTPS itself and says so in its listen line', async () => {
    const server = await start({ TLS_CERT_FILE: cert.certFile, TLS_KEY_FILE: cert.keyFile })
    try {
      expect(server.url, server.logs()).toMatch(/^https:\/\//)
      expect(server.logs()).toContain('TLS terminated here, JA4 captured')
      const health = await getJson(`${server.url}/v1/health`, cert.credentials.cert)
      expect(health.status).toBe(200)
    } finally {
      server.stop()
    }
  })

  it('stops on SIGTERM without waiting for connections still in their hello or handshake', async () => {
    const server = await start({
      TLS_CERT_FILE: cert.certFile,
      TLS_KEY_FILE: cert.keyFile,
      VERDICT_SHUTDOWN_MS: '20000',
    })
    const port = Number(new URL(server.url!).port)
    const sockets: Socket[] = []
    // A keep-alive connection after a request (the HTTP server's own idle connection).
    const agent = new Agent({ keepAlive: true })
    expect((await getJson(`${server.url}/v1/health`, cert.credentials.cert, agent)).status).toBe(200)
    // Half a ClientHello.
    const half = connect(port, '127.0.0.1', () => half.write(Buffer.from([22, 3, 1, 0, 200, 1, 0])))
    // A client whose hello gets through but whose next flight never does: stuck in the handshake.
    let serverHello = false
    const blackHole = createServer((client) => {
      const upstream = connect(port, '127.0.0.1')
      sockets.push(client, upstream)
      upstream.once('data', () => {
        serverHello = true
      })
      upstream.pipe(client)
      client.once('data', (hello) => upstream.write(hello))
      client.on('error', () => {})
      upstream.on('error', () => {})
    })
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r))
    const stuck = request(
      `https://127.0.0.1:${(blackHole.address() as AddressInfo).port}/v1/health`,
      { ca: [cert.credentials.cert], servername: 'localhost' },
      () => {},
    )
    stuck.on('error', () => {})
    stuck.end()
    for (const s of [half]) {
      sockets.push(s)
      s.on('error', () => {})
    }
    // Wait until the stuck handshake has reached the server: its relay connected upstream and the
    // server answered the hello (so it is mid-handshake, waiting for a flight that never comes).
    const reached = await eventually(() => sockets.length >= 3 && serverHello, 10_000, 20)
    expect(reached, `after 10 s: ${sockets.length} sockets, server hello ${serverHello}`).toBe(true)
    server.stop()
    try {
      // 1 would be the shutdown deadline passing with connections still open.
      expect(await server.exit, server.logs()).toBe(0)
    } finally {
      agent.destroy()
      stuck.destroy()
      for (const s of sockets) s.destroy()
      blackHole.close()
    }
  })

  it('refuses to start on a missing, unreadable or mismatched file, saying which', async () => {
    const fail = async (env: Record<string, string>) => {
      const r = await start(env)
      if (r.url) {
        r.stop()
        throw new Error('the server started')
      }
      expect(r.exitCode).toBe(1)
      return r.logs()
    }
    expect(await fail({ TLS_CERT_FILE: cert.certFile })).toMatch(
      /failed to start: TLS_CERT_FILE and TLS_KEY_FILE must be set together \(only TLS_CERT_FILE is set\)/,
    )
    const missing = join(cert.dir, 'nope.pem')
    expect(await fail({ TLS_CERT_FILE: missing, TLS_KEY_FILE: cert.keyFile })).toContain(
      `failed to start: TLS_CERT_FILE: cannot read ${missing} (ENOENT)`,
    )
    expect(await fail({ TLS_CERT_FILE: cert.certFile, TLS_KEY_FILE: other.keyFile })).toMatch(
      /failed to start: TLS_CERT_FILE\/TLS_KEY_FILE: not a usable certificate and key \(.*key values mismatch/,
    )
    const garbage = join(cert.dir, 'garbage.pem')
    writeFileSync(garbage, 'not a certificate\n')
    expect(await fail({ TLS_CERT_FILE: garbage, TLS_KEY_FILE: cert.keyFile })).toMatch(
      /TLS_CERT_FILE\/TLS_KEY_FILE: not a usable certificate and key/,
    )
  })
})
