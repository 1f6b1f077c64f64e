import type { FastifyRequest } from 'fastify'
import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import { LabelBody, LabelResult } from '../schemas/labels.js'
import { isConsoleAuth } from '../services/console/console-auth.js'
import { label } from '../services/network/labels.js'
import type { Actor } from '../services/webhooks/events.js'
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
}
