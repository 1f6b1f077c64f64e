import { tenantContext } from '../context.js'
import { LookupsPage, LookupsQuery } from '../schemas/checks.js'
import { errors } from '../schemas/common.js'
import { listLookups } from '../services/identifiers/identifier-checks.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

export function registerLookupRoutes(app: App): void {
  app.get(
    '/v1/lookups',
    {
      schema: {
        operationId: 'listLookups',
        description:
          'Paged with limit and offset; each row shows a masked hint and the verdict of the check.',
        summary: "The tenant's past identifier checks, newest first (hashes and masked hints only)",
        tags: ['checks'],
        querystring: LookupsQuery,
        response: { 200: LookupsPage, ...errors(400, 401, 429) },
      },
    },
    async (request) =>
      listLookups(tenantContext(request), {
        limit: digits(request.query.limit, 'query.limit', { fallback: 50, min: 1, max: 200 }),
        offset: digits(request.query.offset, 'query.offset', { fallback: 0 }),
        ...(request.query.kind ? { kind: request.query.kind } : {}),
      }),
  )
}
