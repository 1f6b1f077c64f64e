import { Type } from '@fastify/type-provider-typebox'
import { errors, NoQuery, StrEnum, Strict } from '../schemas/common.js'
import { label } from '../services/labels.js'
import { type App, type RouteDeps, tenantCtx } from './types.js'

const LabelBody = Strict({
  label: StrEnum(['fraud', 'chargeback', 'legit'] as const, 'the real outcome'),
  event_id: Type.Optional(Type.String({ maxLength: 64, description: 'id of an event this tenant scored' })),
  entities: Type.Optional(
    Strict({
      ip: Type.Optional(Type.String({ maxLength: 45, format: 'ip' })),
      email: Type.Optional(Type.String({ maxLength: 320, format: 'email' })),
      device_id: Type.Optional(Type.String({ maxLength: 256 })),
    }),
  ),
  note: Type.Optional(Type.String({ maxLength: 500 })),
})

export function registerLabelRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/label',
    {
      schema: {
        summary: 'Report a real outcome: fraud, chargeback or legit (a false positive)',
        description:
          'fraud/chargeback on a scored event feed the operator network when the tenant opted in; legit writes a local suppression for this tenant only and removes no flag from the network. Only identifiers recorded on the event reach the network; entities stay with this tenant. The recorded verdict never changes.',
        tags: ['labels'],
        querystring: NoQuery,
        body: LabelBody,
        response: errors(400, 401, 404, 429),
      },
    },
    async (request) => label({ ...tenantCtx(deps, request), intel: deps.intel }, request.body),
  )
}
