import { Type } from '@fastify/type-provider-typebox'
import { Digits, errors, NoQuery, Strict } from '../schemas/common.js'
import { exportSubject, forgetSubject, listSuppressions } from '../services/privacy.js'
import { digits } from '../util/query.js'
import { type App, type RouteDeps, tenantCtx } from './types.js'

const identifiers = {
  email: Type.Optional(Type.String({ maxLength: 320 })),
  phone: Type.Optional(Type.String({ maxLength: 32 })),
  ip: Type.Optional(Type.String({ maxLength: 45 })),
  device_id: Type.Optional(Type.String({ maxLength: 256 })),
  user_id: Type.Optional(Type.String({ maxLength: 256 })),
}

export function registerPrivacyRoutes(app: App, deps: RouteDeps): void {
  const ctx = (request: Parameters<typeof tenantCtx>[1]) => ({
    ...tenantCtx(deps, request),
    intel: deps.intel,
  })
  app.post(
    '/v1/subject',
    {
      schema: {
        summary: 'Everything this tenant holds about a person (access and portability requests)',
        tags: ['privacy'],
        querystring: NoQuery,
        body: Strict({ ...identifiers, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })) }),
        response: errors(400, 401, 429),
      },
    },
    async (request) => exportSubject(ctx(request), request.body),
  )
  app.post(
    '/v1/forget',
    {
      schema: {
        summary: 'Erase a person: delete every matching row of this tenant and reclaim the storage',
        tags: ['privacy'],
        querystring: NoQuery,
        body: Strict(identifiers),
        response: errors(400, 401, 429),
      },
    },
    async (request) => forgetSubject(ctx(request), request.body),
  )
  app.get(
    '/v1/suppressions',
    {
      schema: {
        summary: 'The audit of erasures and legit labels, newest first (hashes only)',
        tags: ['privacy'],
        querystring: Strict({ limit: Type.Optional(Digits('at most 500 (default 100)')) }),
        response: errors(400, 401, 429),
      },
    },
    async (request) =>
      listSuppressions(
        tenantCtx(deps, request),
        digits(request.query.limit, 'query.limit', { fallback: 100, min: 1, max: 500 }),
      ),
  )
}
