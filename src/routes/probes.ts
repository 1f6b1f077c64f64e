import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'
import type { Metrics } from '../observability/metrics.js'
import type { Readiness } from '../observability/readiness.js'

export interface ProbeOptions {
  readiness: Readiness
  /** Serves /metrics when given. */
  metrics?: Metrics | undefined
  /** When set, /metrics answers only `Authorization: Bearer <token>` (the main port). */
  metricsToken?: string | undefined
}

/** Both sides hashed first: equal lengths for timingSafeEqual, and the token's length is not timed either. */
const digest = (s: string) => createHash('sha256').update(s).digest()

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header?.startsWith('Bearer ') ? header.slice(7).trim() : ''
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0
}

/**
 * Operator probes, outside /v1: no key, no rate limit, no tenant data. `/livez` answers as long as the
 * event loop turns; `/readyz` is 503 with a reason while the process should get no traffic
 * (observability/readiness.ts); `/metrics` is the Prometheus exposition.
 */
export function registerProbeRoutes(app: FastifyInstance, opts: ProbeOptions): void {
  const hidden = { schema: { hide: true } }
  app.get('/livez', hidden, async () => ({ status: 'ok' }))
  app.get('/readyz', hidden, async (_request, reply) => {
    const report = await opts.readiness.check()
    reply.header('cache-control', 'no-store')
    if (!report.ready) reply.code(503)
    return report.ready ? { status: 'ready' } : { status: 'not_ready', reason: report.reason }
  })
  const metrics = opts.metrics
  if (!metrics) return
  const token = opts.metricsToken
  app.get('/metrics', hidden, async (request, reply) => {
    if (token !== undefined && !bearerMatches(request.headers.authorization, token))
      throw new ApiError('unauthorized', 'metrics need the operator token (Authorization: Bearer)')
    const { text, contentType } = await metrics.expose()
    reply.header('cache-control', 'no-store').type(contentType)
    return text
  })
}
