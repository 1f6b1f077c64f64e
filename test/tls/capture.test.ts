import { request as httpRequest } from 'node:http'
import { Agent, request as httpsRequest } from 'node:https'
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ja4Of } from '../../src/tls/capture.js'
import { JA4_PATTERN } from '../../src/tls/ja4.js'
import { ja4FromRequest } from '../../src/tls/request.js'
import { helloRecords } from './hello-builder.js'
import { startTlsApp, type TlsApp, testCertificate } from './tls-app.js'

let cert: Awaited<ReturnType<typeof testCertificate>>
beforeAll(async () => {
  cert = await testCertificate()
})
afterAll(() => cert?.remove())

interface Info {
  ja4: string | null
  protocol: string
  ip: string
  port: number
}

/** GET over TLS with Node's https, trusting the test certificate; `agent` keeps a connection for reuse. */
function get(port: number, path: string, options: { agent?: Agent; headers?: Record<string, string> } = {}) {
  return new Promise<string>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        ca: [cert.credentials.cert],
        agent: options.agent ?? false,
        headers: options.headers ?? {},
      },
      (res) => {
        let body = ''
        res.on('data', (c) => {
          body += c
        })
        res.on('end', () => resolve(body))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/**
 * A TCP relay to `target` that passes what the client sends in `slice`-byte pieces with a pause between
 * them (and can hold everything after the first `holdAfter` bytes for `holdMs`), so the server reads
 * the ClientHello in many small chunks.
 */
async function slowRelay(target: number, slice: number, hold?: { after: number; ms: number }) {
  const relay: Server = createServer((client: Socket) => {
    const upstream = connect(target, '127.0.0.1')
    upstream.setNoDelay(true)
    upstream.pipe(client)
    let sent = 0
    let queue = Promise.resolve()
    client.on('data', (data: Buffer) => {
      client.pause()
      queue = queue.then(async () => {
        for (let at = 0; at < data.length; at += slice) {
          if (hold && sent < hold.after && sent + slice >= hold.after)
            await new Promise((r) => setTimeout(r, hold.ms))
          else await new Promise((r) => setTimeout(r, 1))
          upstream.write(data.subarray(at, at + slice))
          sent += slice
        }
        client.resume()
      })
    })
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.end())
  })
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r))
  return { port: (relay.address() as AddressInfo).port, close: () => relay.close() }
}

/** Resolves when the server closes a raw connection after it sent `bytes`. */
function rawExchange(port: number, bytes: Buffer, closeAfterSend = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      if (bytes.length > 0) socket.write(bytes)
      if (closeAfterSend) socket.end()
    })
    socket.on('data', () => {})
    socket.on('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code}`))
    socket.on('close', () => resolve('closed'))
  })
}

const HELLO_DEADLINE_MS = 1_500

describe('TLS termination with JA4 capture', () => {
  let server: TlsApp
  beforeAll(async () => {
    // A deadline far above the slow relay's drip (a few bytes per timer tick, ~100 ticks) however loaded
    // the machine; the stalled hello is held past it.
    server = await startTlsApp(cert.credentials, { helloTimeoutMs: HELLO_DEADLINE_MS })
  })
  afterAll(() => server?.close())

  it('serves HTTPS and gives every request of a connection the JA4 of its handshake', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const first = JSON.parse(await get(server.port, '/info', { agent })) as Info
      const second = JSON.parse(await get(server.port, '/info', { agent })) as Info
      expect(first.protocol).toBe('https')
      expect(first.ja4).toMatch(JA4_PATTERN)
      expect(first.ja4).toMatch(/^t13d/)
      expect(second.port, 'same connection').toBe(first.port)
      expect(second.ja4).toBe(first.ja4)
    } finally {
      agent.destroy()
    }
  })

  it('reads a ClientHello that arrives a few bytes at a time', async () => {
    const direct = await get(server.port, '/')
    const relay = await slowRelay(server.port, 7)
    try {
      expect(await get(relay.port, '/')).toBe(direct)
      expect(direct).toMatch(JA4_PATTERN)
    } finally {
      relay.close()
    }
  })

  it('goes on without a JA4 when the hello stalls past the deadline', async () => {
    const relay = await slowRelay(server.port, 64, { after: 64, ms: HELLO_DEADLINE_MS + 1_000 })
    try {
      expect(await get(relay.port, '/')).toBe('none')
    } finally {
      relay.close()
    }
  })

  it('drops clients that do not speak TLS or give up, and keeps serving', async () => {
    const plain = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/' }, (res) =>
        resolve(`answered ${res.statusCode}`),
      )
      req.on('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code}`))
      req.end()
    })
    expect(plain).toMatch(/^error /)
    const hello = helloRecords({ ciphers: [0x1301], extensions: [0x002b] })
    expect(await rawExchange(server.port, Buffer.from('\x16\x03\x01\xff\xff garbage'))).toMatch(
      /closed|error/,
    )
    expect(await rawExchange(server.port, hello.subarray(0, 20), true)).toMatch(/closed|error/)
    expect(await rawExchange(server.port, Buffer.alloc(0), true)).toMatch(/closed|error/)
    // A well-formed hello the server cannot agree with (no shared cipher, no key share): TLS refuses it.
    expect(await rawExchange(server.port, hello)).toMatch(/closed|error/)
    expect(await get(server.port, '/')).toMatch(JA4_PATTERN)
  })
})

describe('which JA4 a request gets (ja4FromRequest)', () => {
  const VALID = 't13d1516h2_8daaf6152771_e5627efa2ab1'

  it('takes the header only through a proxy TRUST_PROXY trusts, and only a well-formed JA4', async () => {
    const app = Fastify({ trustProxy: ['10.0.0.0/8'] })
    app.get('/', async (request) => ({
      header: ja4FromRequest(request, { ja4Header: 'x-ja4' }),
      unset: ja4FromRequest(request, { ja4Header: undefined }),
    }))
    const ask = async (remoteAddress: string, headers: Record<string, string>) =>
      (await app.inject({ url: '/', remoteAddress, headers })).json()

    const forwarded = { 'x-forwarded-for': '203.0.113.9', 'x-ja4': VALID }
    expect(await ask('10.1.2.3', forwarded)).toEqual({ header: VALID, unset: null })
    expect(await ask('10.1.2.3', { ...forwarded, 'x-ja4': ` ${VALID} ` })).toEqual({
      header: VALID,
      unset: null,
    })
    // An untrusted peer can send both headers; neither is believed.
    expect(await ask('198.51.100.7', forwarded)).toEqual({ header: null, unset: null })
    // Not through a proxy (no hop to walk past): the header is the client's own.
    expect(await ask('10.1.2.3', { 'x-ja4': VALID })).toEqual({ header: null, unset: null })
    for (const bad of ['curl', `${VALID}x`, VALID.toUpperCase(), `${VALID}, ${VALID}`, 'x'.repeat(4000)])
      expect(await ask('10.1.2.3', { ...forwarded, 'x-ja4': bad }), bad).toEqual({
        header: null,
        unset: null,
      })
    await app.close()
  })

  it('uses the captured JA4 for direct clients and the edge header behind a trusted proxy', async () => {
    // The test client is 127.0.0.1, trusted here: a proxy re-encrypting to verdict.
    const behind = await startTlsApp(cert.credentials, { trustProxy: ['127.0.0.1'], ja4Header: 'x-ja4' })
    const direct = await startTlsApp(cert.credentials, { ja4Header: 'x-ja4' })
    try {
      const viaProxy = (headers: Record<string, string>) =>
        get(behind.port, '/info', { headers }).then((b) => JSON.parse(b) as Info)
      // Through the proxy: its own handshake's JA4 is not the client's, so only the header counts.
      expect((await viaProxy({ 'x-forwarded-for': '203.0.113.9', 'x-ja4': VALID })).ja4).toBe(VALID)
      expect((await viaProxy({ 'x-forwarded-for': '203.0.113.9' })).ja4).toBeNull()
      // Without a forwarded address the request is the peer's own: the captured JA4.
      const own = await viaProxy({ 'x-ja4': VALID })
      expect(own.ja4).toMatch(JA4_PATTERN)
      expect(own.ja4).not.toBe(VALID)
      // TRUST_PROXY off: the header is ignored, whatever it says.
      const info = JSON.parse(
        await get(direct.port, '/info', { headers: { 'x-forwarded-for': '203.0.113.9', 'x-ja4': VALID } }),
      ) as Info
      expect(info.ja4).toBe(own.ja4)
    } finally {
      await Promise.all([behind.close(), direct.close()])
    }
  })

  it('has no JA4 for sockets it did not terminate', () => {
    expect(ja4Of(undefined)).toBeUndefined()
    expect(ja4Of({})).toBeUndefined()
  })
})
