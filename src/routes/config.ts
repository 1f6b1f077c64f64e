import { errors, NoQuery } from '../schemas/common.js'
import { ConfigPatch, ConfigView } from '../schemas/config.js'
import { getConfig, updateConfig } from '../services/config.js'
import { type App, type RouteDeps, tenantCtx } from './types.js'

export function registerConfigRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/config',
    {
      schema: {
        summary: "The tenant's weight and threshold overrides and the effective configuration",
        tags: ['config'],
        querystring: NoQuery,
        response: { 200: ConfigView, ...errors(400, 401, 429) },
      },
    },
    async (request) => getConfig(tenantCtx(deps, request)),
  )

  app.put(
    '/v1/config',
    {
      schema: {
        summary: 'Override weights and thresholds; keys not sent keep their current value',
        tags: ['config'],
        querystring: NoQuery,
        body: ConfigPatch,
        response: { 200: ConfigView, ...errors(400, 401, 429) },
      },
    },
    async (request) => updateConfig(tenantCtx(deps, request), request.body),
  )
}
