import { requestContext } from '../context.js'
import { TRAP_PATHS } from '../services/network/traps.js'
import type { App } from './types.js'

/**
 * Abuse traps: a genuine probe is recorded as a trap hit (see TrapRecorder for what is filtered out and
 * how often it records), then the request goes to the not-found handler, so the answer is exactly that
 * of any unknown path. Outside /v1, so neither keys nor the keyless limit apply.
 */
export function registerTrapRoutes(app: App): void {
  for (const url of TRAP_PATHS) {
    app.route({
      method: ['GET', 'POST', 'HEAD', 'PUT'],
      url,
      schema: { hide: true },
      handler: async (request, reply) => {
        const { ip, host, headers } = request
        await requestContext(request).traps.record({ ip, path: url, host, headers })
        return reply.callNotFound()
      },
    })
  }
}
