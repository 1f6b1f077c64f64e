import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import { ConfigPatch, ConfigView } from '../schemas/config.js'
import { getConfig, updateConfig } from '../services/config.js'
import type { App } from './types.js'

export function registerConfigRoutes(app: App): void {
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
    async (request) => getConfig(tenantContext(request)),
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
    async (request) => updateConfig(tenantContext(request), request.body),
  )
}
