import { Type } from '@fastify/type-provider-typebox'
import { Digits, errors, Strict } from '../schemas/common.js'
import { deviceObservations } from '../services/device-observations.js'
import { digits } from '../util/query.js'
import { type App, type RouteDeps, tenantCtx } from './types.js'

const ObservationsParams = Strict({
  deviceId: Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'raw fingerprint (device_id) or a resolved_id from a score response',
  }),
})

const ObservationsQuery = Strict({
  hours: Type.Optional(Digits('only the last N hours, 1-87600 (default: everything)')),
})

export function registerDeviceRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/device/:deviceId/observations',
    {
      schema: {
        summary: 'Everything observed for a device of this tenant, newest first',
        description:
          'Time, resolution rung, network prefix, ASN, country, connection type, verdict and event id of each score that carried this device.',
        tags: ['devices'],
        params: ObservationsParams,
        querystring: ObservationsQuery,
        response: errors(400, 401, 429),
      },
    },
    async (request) => {
      const q = request.query
      const hours =
        q.hours === undefined ? null : digits(q.hours, 'query.hours', { fallback: 0, min: 1, max: 87_600 })
      return deviceObservations(tenantCtx(deps, request), request.params.deviceId, hours)
    },
  )
}
