import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { testCertificate } from '../tls/tls-app.js'

export interface Received {
  headers: Record<string, string>
  body: string
  /** How many requests for this webhook-id were being answered at the moment this one arrived. */
  concurrent: number
}

/**
 * A loopback HTTPS webhook receiver with its own self-signed certificate (for localhost and 127.0.0.1),
 * which the sender trusts through `ca`. `answer` picks each response's status (200 by default);
 * `delayMs` holds each answer back.
 */
export async function startReceiver(
  options: { answer?: (r: Received, i: number) => number; delayMs?: number } = {},
) {
  const cert = await testCertificate()
  const received: Received[] = []
  const inFlight = new Map<string, number>()
  const server: Server = createServer(
    { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) },
    (req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => {
        body += c.toString()
      })
      req.on('end', () => {
        const id = String(req.headers['webhook-id'] ?? '')
        const now = (inFlight.get(id) ?? 0) + 1
        inFlight.set(id, now)
        const r: Received = {
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body,
          concurrent: now,
        }
        received.push(r)
        const status = options.answer ? options.answer(r, received.length - 1) : 200
        setTimeout(() => {
          inFlight.set(id, (inFlight.get(id) ?? 1) - 1)
          res.writeHead(status, { 'content-type': 'text/plain' }).end('ok')
        }, options.delayMs ?? 0)
      })
    },
  )
  // TCP connections, counted before any TLS or HTTP: a refused target must never open one.
  const counts = { connections: 0 }
  server.on('connection', () => {
    counts.connections++
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    port,
    url: `https://localhost:${port}/hook`,
    ca: readFileSync(cert.certFile, 'utf8'),
    certFile: cert.certFile,
    received,
    counts,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      cert.remove()
    },
  }
}
