import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { closeServer, listen } from './browser.js'

/**
 * Stand-in for verdict's beacon routes until the server side is wired: serves the built bundle and records
 * every `POST /v1/beacon` body. Tests use only the BeaconBackend interface, so the real server (started on
 * loopback with a publishable key, beacons read back from its store) can replace it.
 */
export interface CapturedBeacon {
  body: unknown
  key: string | undefined
  origin: string | undefined
}

export interface BeaconBackend {
  /** Origin the page loads the script from; the library's default endpoint. */
  origin: string
  /** Classic script (global `Verdict`) and ES module. */
  scriptUrl: string
  moduleUrl: string
  /** Publishable key the pages pass to collect/watch. */
  key: string
  beacons: CapturedBeacon[]
  close(): Promise<void>
}

const BUNDLE = join(import.meta.dirname, '..', '..', 'dist', 'beacon')

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export async function startCaptureBackend(): Promise<BeaconBackend> {
  const beacons: CapturedBeacon[] = []
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const origin = req.headers.origin
    const cors = { 'access-control-allow-origin': origin ?? '*', vary: 'origin' }
    if (req.method === 'GET' && (path === '/v1/beacon.js' || path === '/v1/beacon.mjs')) {
      const file = path.endsWith('.mjs') ? 'verdict.mjs' : 'verdict.js'
      res.writeHead(200, { 'content-type': 'text/javascript', 'access-control-allow-origin': '*' })
      res.end(readFileSync(join(BUNDLE, file)))
      return
    }
    if (path !== '/v1/beacon') {
      res.writeHead(404).end()
      return
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...cors,
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'content-type, x-api-key',
        'access-control-max-age': '600',
      })
      res.end()
      return
    }
    const body = JSON.parse(await readBody(req)) as { device_id?: string }
    beacons.push({ body, key: req.headers['x-api-key'] as string | undefined, origin })
    res.writeHead(200, { ...cors, 'content-type': 'application/json' })
    res.end(JSON.stringify({ device_id: body.device_id, visit_id: `vis_${randomUUID()}` }))
  })
  const port = await listen(server)
  const origin = `http://127.0.0.1:${port}`
  return {
    origin,
    scriptUrl: `${origin}/v1/beacon.js`,
    moduleUrl: `${origin}/v1/beacon.mjs`,
    key: 'pk_test_capture',
    beacons,
    close: () => closeServer(server),
  }
}
