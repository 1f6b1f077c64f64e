import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  ConfigPatch,
  ConfigVersions,
  ConfigVersionsQuery,
  ConfigView,
  SimulateRequest,
  Simulation,
} from '../schemas/config.js'
import { simulateConfig } from '../services/rules/simulate.js'
import { getConfig, listConfigVersions, updateConfig } from '../services/rules/tenant-config.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

export function registerConfigRoutes(app: App): void {
  app.get(
    '/v1/config',
    {
      schema: {
        operationId: 'getConfig',
        description:
          'Shows the overrides this tenant saved and the configuration scoring uses after they are merged onto the defaults.',
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
        operationId: 'putConfig',
        description:
          'Each saved change becomes a new configuration version (see GET /v1/config/versions). Thresholds must stay ordered.',
        summary: 'Override weights and thresholds; keys not sent keep their current value',
        tags: ['config'],
        querystring: NoQuery,
        body: ConfigPatch,
        response: { 200: ConfigView, ...errors(400, 401, 429) },
      },
    },
    async (request) => updateConfig(tenantContext(request), request.body),
  )

  app.get(
    '/v1/config/versions',
    {
      schema: {
        operationId: 'listConfigVersions',
        description:
          'Every change made with PUT /v1/config, so a change can be reviewed or undone by saving an earlier one again.',
        summary:
          "The tenant's configuration versions, newest first, each with its full effective configuration",
        tags: ['config'],
        querystring: ConfigVersionsQuery,
        response: { 200: ConfigVersions, ...errors(400, 401, 429) },
      },
    },
    async (request) =>
      listConfigVersions(
        tenantContext(request),
        digits(request.query.limit, 'query.limit', { fallback: 20, min: 1, max: 100 }),
        digits(request.query.offset, 'query.offset', { fallback: 0 }),
      ),
  )

  app.post(
    '/v1/config/simulate',
    {
      schema: {
        operationId: 'simulateConfig',
        summary: 'What-if: decide recent events again under a proposed change, without saving anything',
        description:
          'The proposal is merged onto the current overrides and validated as PUT /v1/config validates it. Each event is decided under the current configuration and under the proposal; labelled events give precision and recall of block and of review for both. See docs/outcomes.md.',
        tags: ['config'],
        querystring: NoQuery,
        body: SimulateRequest,
        response: { 200: Simulation, ...errors(400, 401, 429) },
      },
    },
    async (request) => simulateConfig(tenantContext(request), request.body),
  )
}
