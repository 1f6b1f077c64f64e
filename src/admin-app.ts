import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify'
import type { Metrics } from './observability/metrics.js'
import type { Readiness } from './observability/readiness.js'
import { registerErrorHandling } from './plugins/errors.js'
import { requestIdOf } from './plugins/observability.js'
import { registerProbeRoutes } from './routes/probes.js'

/**
 * The operator listener of VERDICT_ADMIN_PORT: `/metrics`, `/livez` and `/readyz` only, without key,
 * token or rate limit, apart from the public API. Built before the store is opened, so readiness
 * answers 503 (`migrating`) while the migrations run. No side effects: server.ts listens.
 */
export async function buildAdminApp(opts: {
  readiness: Readiness
  metrics: Metrics
  logger?: FastifyServerOptions['logger']
}): Promise<FastifyInstance> {
  // Probes every few seconds would flood the log: this listener logs errors only.
  const app = Fastify({
    logger: opts.logger ?? false,
    genReqId: requestIdOf,
    logController: new LogController({ disableRequestLogging: true }),
  })
  registerErrorHandling(app)
  registerProbeRoutes(app, { readiness: opts.readiness, metrics: opts.metrics })
  await app.ready()
  return app
}
