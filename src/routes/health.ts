import { requestContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import { Health } from '../schemas/service.js'
import { healthReport } from '../services/runtime/health.js'
import type { App } from './types.js'

export function registerHealthRoutes(app: App): void {
  app.get(
    '/v1/health',
    {
      // Keyless like every health probe; a sent key is checked (throttled) only to unlock the details.
      config: { auth: 'none', readsKey: true },
      schema: {
        operationId: 'getHealth',
        description:
          'Needs no key, and then answers only the status; with a valid key it adds the version, the database, and checks naming missing feeds and a broken DNS resolver.',
        summary: 'Service health, database reachability and reference-data freshness',
        tags: ['service'],
        security: [],
        querystring: NoQuery,
        response: { 200: Health, ...errors(400, 429) },
      },
    },
    async (request) => healthReport(requestContext(request), request.auth !== null),
  )
}
