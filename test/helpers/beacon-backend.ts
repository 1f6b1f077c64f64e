import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { issueKey } from '../../src/services/access/tenants.js'
import { closeServer, listen } from './browser.js'
import { build, type Harness } from './build.js'

/**
 * What the browser tests talk to: `startVerdictBackend` is the real verdict app behind a loopback listener
 * that records each accepted `POST /v1/beacon` (body, key, Origin) on its way through;
 * `startCaptureBackend` is the stand-in that only captures, kept for library work without the server.
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
  /** Lets pages of this origin beacon (the real server issues a pk_ key for it into `key`). */
  allowOrigin(origin: string): Promise<void>
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
    const body = JSON.parse(await readBody(req)) as { device_id?: string; key?: string }
    beacons.push({ body, key: (req.headers['x-api-key'] as string | undefined) ?? body.key, origin })
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
    allowOrigin: async () => {},
    close: () => closeServer(server),
  }
}

/** Request headers the browser sends that the beacon routes read. */
const FORWARDED = [
  'origin',
  'x-api-key',
  'content-type',
  'user-agent',
  'if-none-match',
  'access-control-request-method',
  'access-control-request-headers',
]

/**
 * The real app (`build`: a fresh SQLite store) answering every request through app.inject, so the
 * browser's requests meet the real guard, origin check, CORS and store. High limits: every page shares
 * one loopback address and the harness clock never moves the limiter's window.
 */
export interface VerdictBackend extends BeaconBackend {
  /** CORS preflights (OPTIONS /v1/beacon) received: the library's simple request needs none. */
  preflights: number
  store: Harness['store']
  /** `POST /v1/score` with the tenant's secret key, as the shop's backend would call it. */
  score(payload: Record<string, unknown>): Promise<{ reasons: string[]; device?: Record<string, unknown> }>
}

export async function startVerdictBackend(): Promise<VerdictBackend> {
  const h = await build({ keylessRateLimit: 1_000_000 })
  const tenant = await h.tenant({ rateLimit: 1_000_000 })
  const beacons: CapturedBeacon[] = []
  const origins: string[] = []
  const server = createServer(async (req, res) => {
    const payload = await readBody(req)
    const headers: Record<string, string> = {}
    for (const name of FORWARDED) {
      const v = req.headers[name]
      if (typeof v === 'string') headers[name] = v
    }
    const answer = await h.app.inject({
      method: (req.method ?? 'GET') as 'GET',
      url: req.url ?? '/',
      headers,
      remoteAddress: req.socket.remoteAddress ?? '127.0.0.1',
      ...(payload ? { payload } : {}),
    })
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'OPTIONS' && path === '/v1/beacon') backend.preflights++
    if (req.method === 'POST' && path === '/v1/beacon' && answer.statusCode === 200) {
      const body = JSON.parse(payload) as { key?: string }
      beacons.push({ body, key: headers['x-api-key'] ?? body.key, origin: headers['origin'] })
    }
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(answer.headers)) {
      if (k !== 'content-length' && k !== 'connection' && k !== 'transfer-encoding' && v !== undefined)
        out[k] = String(v)
    }
    res.writeHead(answer.statusCode, out)
    res.end(answer.rawPayload)
  })
  const port = await listen(server)
  const origin = `http://127.0.0.1:${port}`
  const backend = {
    origin,
    scriptUrl: `${origin}/v1/beacon.js`,
    moduleUrl: `${origin}/v1/beacon.mjs`,
    key: '',
    beacons,
    preflights: 0,
    store: h.store,
    async score(payload: Record<string, unknown>) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: tenant.headers, payload })
      if (res.statusCode !== 200) throw new Error(`score answered ${res.statusCode}: ${res.body}`)
      return res.json()
    },
    async allowOrigin(pageOrigin: string) {
      origins.push(pageOrigin)
      const issued = await issueKey(h.store, h.clock, tenant.tenantId, { publishable: { origins } })
      backend.key = issued.apiKey
    },
    async close() {
      await closeServer(server)
      await h.close()
    },
  }
  return backend
}
