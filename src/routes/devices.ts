import { tenantContext } from '../context.js'
import { errors } from '../schemas/common.js'
import { Observations, ObservationsParams, ObservationsQuery } from '../schemas/devices.js'
import { deviceObservations } from '../services/devices/device-observations.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

export function registerDeviceRoutes(app: App): void {
  app.get(
    '/v1/device/:deviceId/observations',
    {
      schema: {
        operationId: 'listDeviceObservations',
        summary: 'Everything observed for a device of this tenant, newest first',
        description:
          'Time, resolution rung, network prefix, ASN, country, connection type, verdict and event id of each score that carried this device.',
        tags: ['devices'],
        params: ObservationsParams,
        querystring: ObservationsQuery,
        response: { 200: Observations, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const q = request.query
      const hours =
        q.hours === undefined ? null : digits(q.hours, 'query.hours', { fallback: 0, min: 1, max: 87_600 })
      return deviceObservations(tenantContext(request), request.params.deviceId, hours)
    },
  )
}
