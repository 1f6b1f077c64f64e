import { TRAP_PATHS } from '../services/traps.js'
import type { App, RouteDeps } from './types.js'

/**
 * Abuse traps: answered exactly like any unknown path (404) whatever happens behind; a genuine probe
 * is recorded as a trap hit (see TrapRecorder for what is filtered out and how often it records).
 * Outside /v1, so neither keys nor the keyless limit apply: a trap must look like any other 404.
 */
export function registerTrapRoutes(app: App, deps: RouteDeps): void {
  for (const url of TRAP_PATHS) {
    app.route({
      method: ['GET', 'POST', 'HEAD', 'PUT'],
      url,
      schema: { hide: true },
      handler: async (request, reply) => {
        await deps.traps.record({ ip: request.ip, path: url, host: request.host, headers: request.headers })
        return reply.code(404).send({ error: `no route for ${request.method} ${url}` })
      },
    })
  }
}
