import { Type } from '@fastify/type-provider-typebox'
import { errors, NoQuery } from '../schemas/common.js'
import type { App, RouteDeps } from './types.js'

const AiStatus = Type.Object(
  {
    configured: Type.Boolean(),
    provider: Type.Union([Type.String(), Type.Null()]),
    model: Type.Union([Type.String(), Type.Null()]),
    deadlineMs: Type.Integer(),
    recentFailures: Type.Integer({ description: 'provider failures in the last 10 minutes' }),
    lastFailure: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: true },
)

const Health = Type.Object(
  {
    status: Type.String({ description: '`ok`, or `degraded` when the database is unreachable' }),
    version: Type.String(),
    time: Type.Integer({ description: 'server clock, ms' }),
    database: Type.Object({ engine: Type.String(), reachable: Type.Boolean() }),
    ai: AiStatus,
    sources: Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.String(),
        loaded: Type.Boolean(),
        entries: Type.Union([Type.Integer(), Type.Null()]),
        dataDate: Type.Union([Type.String(), Type.Null()]),
        attribution: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  },
  { additionalProperties: true },
)

export function registerHealthRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/health',
    {
      config: { auth: 'none' },
      schema: {
        summary: 'Service health, database reachability and reference-data freshness',
        tags: ['service'],
        security: [],
        querystring: NoQuery,
        response: { 200: Health, ...errors(400, 429) },
      },
    },
    async () => {
      const reachable = await deps.store.db.ping().catch(() => false)
      return {
        status: reachable ? 'ok' : 'degraded',
        version: deps.version,
        time: deps.clock.now(),
        database: { engine: deps.store.db.dialect, reachable },
        sources: deps.intel.sources(),
        ai: deps.explainer.status(),
      }
    },
  )
}
