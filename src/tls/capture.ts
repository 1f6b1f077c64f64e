import { readFileSync } from 'node:fs'
import type { Server as HttpServer } from 'node:http'
import type { Socket } from 'node:net'
import { createSecureContext, createServer as createTlsServer, type TLSSocket } from 'node:tls'
import { assembleClientHello, MAX_CLIENT_HELLO } from './client-hello.js'
import { ja4FromBytes } from './ja4.js'

/**
 * TLS termination with a JA4 of every connection, on the Fastify app's own HTTP server.
 *
 * The app's `http.Server` keeps listening (Fastify's listen, close and connection tracking are
 * unchanged), but each TCP connection it accepts goes through two steps before HTTP sees it: the first
 * bytes are read until the ClientHello is complete and fingerprinted, then put back, and the socket is
 * injected into a non-listening `tls.Server` (its documented 'connection' event), whose handshake is
 * Node's own. The decrypted socket is handed to the HTTP server's original connection listener, exactly
 * as `https.Server` does. Nothing of this is installed when verdict serves plain HTTP.
 */

export interface TlsCredentials {
  cert: Buffer
  key: Buffer
}

/** Reads and checks the PEM files at start, so a bad path or a key that does not fit fails clearly. */
export function readTlsCredentials(files: { certFile: string; keyFile: string }): TlsCredentials {
  const read = (variable: string, path: string) => {
    try {
      return readFileSync(path)
    } catch (err) {
      throw new Error(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? err})`)
    }
  }
  const credentials = {
    cert: read('TLS_CERT_FILE', files.certFile),
    key: read('TLS_KEY_FILE', files.keyFile),
  }
  try {
    createSecureContext(credentials)
  } catch (err) {
    throw new Error(
      `TLS_CERT_FILE/TLS_KEY_FILE: not a usable certificate and key (${(err as Error).message})`,
    )
  }
  return credentials
}

/** Connection -> its JA4 (null when the ClientHello could not be read). Only sockets terminated here. */
const captured = new WeakMap<object, string | null>()

/**
 * The JA4 of a TLS connection verdict terminated (pass `request.raw.socket`): a string, null when the
 * ClientHello was not readable, undefined for any other socket (plain HTTP, app.inject).
 */
export function ja4Of(socket: object | null | undefined): string | null | undefined {
  return socket ? captured.get(socket) : undefined
}

export interface TerminateOptions {
  /** How long a client may take to send its whole ClientHello; after it, TLS goes on without a JA4. */
  helloTimeoutMs?: number
}

const HELLO_TIMEOUT_MS = 10_000
/** Bytes buffered while waiting for the hello: the largest hello plus the headers of its records. */
const MAX_PEEK = MAX_CLIENT_HELLO + 1024

type ConnectionListener = (this: HttpServer, socket: Socket | TLSSocket) => void

/** The 4-tuple of a TCP connection, the same seen from its raw socket and from its TLS socket. */
function tuple(socket: Socket): string | null {
  if (!socket.remoteAddress) return null
  return `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`
}

/**
 * Makes `server` (the app's HTTP server, before it listens) speak TLS with the given certificate and
 * record the JA4 of each connection for ja4Of. Clients that do not speak TLS fail the handshake.
 * Returns the TLS engine (its setSecureContext() would swap a renewed certificate in).
 */
export function terminateTls(
  server: HttpServer,
  credentials: TlsCredentials,
  options: TerminateOptions = {},
) {
  const httpListeners = server.listeners('connection') as ConnectionListener[]
  if (httpListeners.length === 0) throw new Error('the HTTP server has no connection listener to hand TLS to')
  server.removeAllListeners('connection')

  const engine = createTlsServer({ ...credentials, ALPNProtocols: ['http/1.1'] })
  // Connections HTTP does not know yet (reading the hello, or in the handshake) by their 4-tuple: the
  // TLS socket is another object than the raw one, but both report the same addresses and ports.
  const handshaking = new Map<string, { raw: Socket; ja4: string | null }>()
  const settle = (socket: TLSSocket): string | null => {
    const key = tuple(socket)
    const entry = key === null ? undefined : handshaking.get(key)
    if (key !== null) handshaking.delete(key)
    return entry?.ja4 ?? null
  }
  // Node's close() and server.ts's shutdown close the idle HTTP connections; a connection still in its
  // handshake has no request either and would otherwise hold the close open until its TLS timeout.
  const closeIdle = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = () => {
    for (const { raw } of handshaking.values()) raw.destroy()
    handshaking.clear()
    closeIdle()
  }
  engine.on('secureConnection', (socket: TLSSocket) => {
    captured.set(socket, settle(socket))
    for (const listener of httpListeners) listener.call(server, socket)
  })
  engine.on('tlsClientError', (_err, socket: TLSSocket) => {
    settle(socket)
    socket.destroy()
  })

  const helloTimeoutMs = options.helloTimeoutMs ?? HELLO_TIMEOUT_MS
  server.on('connection', (raw: Socket) => {
    // The raw socket's errors (a reset mid-hello) end the connection instead of the process.
    raw.on('error', () => raw.destroy())
    const key = tuple(raw)
    if (key === null) {
      // No peer address: the connection is already gone.
      raw.destroy()
      return
    }
    const entry = { raw, ja4: null as string | null }
    handshaking.set(key, entry)
    raw.once('close', () => {
      if (handshaking.get(key) === entry) handshaking.delete(key)
    })
    readClientHello(raw, helloTimeoutMs, (bytes) => {
      entry.ja4 = ja4FromBytes(bytes)
      engine.emit('connection', raw)
    })
  })
  return engine
}

/**
 * Reads from `socket` until the first ClientHello is complete (or is clearly not one, or MAX_PEEK
 * bytes or the deadline are reached), puts every byte back and calls `done` with them. A client that
 * closes or half-closes first is dropped.
 */
function readClientHello(socket: Socket, timeoutMs: number, done: (bytes: Buffer) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  let finished = false
  const finish = (handOver: boolean) => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    socket.off('data', onData)
    socket.off('end', onEnd)
    socket.off('close', onClose)
    if (!handOver) {
      socket.destroy()
      return
    }
    socket.pause()
    const bytes = Buffer.concat(chunks, size)
    // The TLS socket reads what is buffered here before anything newer (Node's TLSSocket initRead).
    if (size > 0) socket.unshift(bytes)
    done(bytes)
  }
  const onData = (chunk: Buffer) => {
    chunks.push(chunk)
    size += chunk.length
    if (size >= MAX_PEEK || assembleClientHello(Buffer.concat(chunks, size)).status !== 'incomplete')
      finish(true)
  }
  const onEnd = () => finish(false)
  const onClose = () => finish(false)
  const timer = setTimeout(() => finish(true), timeoutMs)
  socket.on('data', onData)
  socket.once('end', onEnd)
  socket.once('close', onClose)
}

/** Fastify's listen line, saying https where verdict terminates TLS (Fastify would print http). */
export function httpsListenText(address: string): string {
  return `Server listening at ${address.replace(/^http:/, 'https:')} (TLS terminated here, JA4 captured)`
}
