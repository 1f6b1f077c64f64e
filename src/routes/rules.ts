import { tenantContext } from '../context.js'
import { errors } from '../schemas/common.js'
import { RulesPerformance, RulesPerformanceQuery } from '../schemas/rules.js'
import { rulesPerformance } from '../services/rules/rules-performance.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

export function registerRuleRoutes(app: App): void {
  app.get(
    '/v1/rules/performance',
    {
      schema: {
        operationId: 'getRulePerformance',
        summary:
          'Per reason code: how often it fired, its labelled outcomes, precision, recall and a suggested weight',
        description:
          'An event counts under its latest label (fraud and chargeback both count as fraud). Precision comes with a 95 % Wilson interval; the suggested weight appears once a code has 30 labelled events. See docs/outcomes.md.',
        tags: ['labels'],
        querystring: RulesPerformanceQuery,
        response: { 200: RulesPerformance, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const ctx = tenantContext(request)
      const days = digits(request.query.window_days, 'query.window_days', { fallback: 30, min: 1, max: 365 })
      // Reads every labelled event of the window: one at a time per tenant (docs/security.md).
      return ctx.tenantWork.exclusive('rules-performance', ctx.tenant.id, () =>
        rulesPerformance(ctx, ctx.tenant.id, days),
      )
    },
  )
}
