import type { FastifyRequest } from 'fastify'
import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  LabelBody,
  LabelParams,
  LabelResult,
  LabelsPage,
  LabelsQuery,
  LabelWithdrawn,
} from '../schemas/labels.js'
import { isConsoleAuth } from '../services/console/console-auth.js'
import { label, listLabels, withdrawLabel } from '../services/network/labels.js'
import type { Actor } from '../services/webhooks/events.js'
import { digits } from '../util/query.js'
import { IdempotencyHeaders, idempotencyErrors, replayable } from './idempotent.js'
import type { App } from './types.js'

/** Who labels, for the webhook payloads: the console user or the API key, by id. */
function actorOf(request: FastifyRequest): Actor | null {
  const auth = request.auth
  if (!auth) return null
  return isConsoleAuth(auth)
    ? { type: 'console_user', id: auth.console.userId }
    : { type: 'api_key', id: auth.keyId }
}

export function registerLabelRoutes(app: App): void {
  app.post(
    '/v1/label',
    {
      schema: {
        operationId: 'label',
        summary: 'Report a real outcome: fraud, chargeback or legit (a false positive)',
        description:
          'fraud/chargeback on a scored event feed the operator network when the tenant opted in; legit writes a local suppression for this tenant only and removes no flag from the network. Only identifiers recorded on the event reach the network; entities stay with this tenant. The recorded verdict never changes.',
        tags: ['labels'],
        querystring: NoQuery,
        headers: IdempotencyHeaders,
        body: LabelBody,
        response: { 200: LabelResult, ...errors(400, 401, 404, 429), ...idempotencyErrors() },
      },
    },
    async (request, reply) =>
      replayable(request, reply, (idem) =>
        label(tenantContext(request), request.body, idem, actorOf(request)),
      ),
  )
  app.get(
    '/v1/labels',
    {
      schema: {
        operationId: 'listLabels',
        description: 'Paged with limit and offset.',
        summary: 'Recorded outcomes, newest first; filter by event, user, label and time',
        tags: ['labels'],
        querystring: LabelsQuery,
        response: { 200: LabelsPage, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const q = request.query
      return listLabels(tenantContext(request), {
        limit: digits(q.limit, 'query.limit', { fallback: 50, min: 1, max: 200 }),
        offset: digits(q.offset, 'query.offset', { fallback: 0 }),
        ...(q.event_id !== undefined ? { eventId: q.event_id } : {}),
        ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
        ...(q.label !== undefined ? { label: q.label } : {}),
        ...(q.since_ms ? { sinceMs: digits(q.since_ms, 'query.since_ms', { fallback: 0 }) } : {}),
        ...(q.until_ms ? { untilMs: digits(q.until_ms, 'query.until_ms', { fallback: 0 }) } : {}),
      })
    },
  )
  app.delete(
    '/v1/labels/:id',
    {
      schema: {
        operationId: 'withdrawLabel',
        summary: 'Withdraw a label; the operator-network flags it contributed go with it',
        description:
          'Each withdrawn network flag is recorded in the suppression audit (action `withdraw`), and this tenant never contributes that entity again. The recorded verdict never changes.',
        tags: ['labels'],
        params: LabelParams,
        querystring: NoQuery,
        response: { 200: LabelWithdrawn, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => withdrawLabel(tenantContext(request), request.params.id),
  )
}
