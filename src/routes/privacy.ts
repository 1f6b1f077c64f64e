import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  ForgetBody,
  ForgetResult,
  SubjectBody,
  SubjectExport,
  SuppressionsPage,
  SuppressionsQuery,
} from '../schemas/privacy.js'
import { exportSubject, forgetSubject, listSuppressions } from '../services/privacy/privacy.js'
import { digits } from '../util/query.js'
import { IdempotencyHeaders, idempotencyErrors, replayable } from './idempotent.js'
import type { App } from './types.js'

export function registerPrivacyRoutes(app: App): void {
  app.post(
    '/v1/subject',
    {
      schema: {
        operationId: 'getSubject',
        description:
          'Matches on any of the identifiers sent; raw emails and IPs are matched through their keyed hashes.',
        summary: 'Everything this tenant holds about a person (access and portability requests)',
        tags: ['privacy'],
        querystring: NoQuery,
        body: SubjectBody,
        response: { 200: SubjectExport, ...errors(400, 401, 429) },
      },
    },
    async (request) => exportSubject(tenantContext(request), request.body),
  )
  app.post(
    '/v1/forget',
    {
      schema: {
        operationId: 'forgetSubject',
        description:
          "Deletes this tenant's matching events, lookups, list entries, labels, device observations and stored idempotent responses; the erasure is recorded in the suppression audit with hashes only.",
        summary: 'Erase a person: delete every matching row of this tenant and reclaim the storage',
        tags: ['privacy'],
        querystring: NoQuery,
        headers: IdempotencyHeaders,
        body: ForgetBody,
        response: { 200: ForgetResult, ...errors(400, 401, 429), ...idempotencyErrors() },
      },
    },
    async (request, reply) =>
      replayable(request, reply, (idem) => forgetSubject(tenantContext(request), request.body, idem)),
  )
  app.get(
    '/v1/suppressions',
    {
      schema: {
        operationId: 'listSuppressions',
        description: 'Paged with limit and offset.',
        summary: 'The audit of erasures and legit labels, newest first (hashes only)',
        tags: ['privacy'],
        querystring: SuppressionsQuery,
        response: { 200: SuppressionsPage, ...errors(400, 401, 429) },
      },
    },
    async (request) =>
      listSuppressions(
        tenantContext(request),
        digits(request.query.limit, 'query.limit', { fallback: 100, min: 1, max: 500 }),
      ),
  )
}
