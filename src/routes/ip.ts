import { parseIp } from '../intel/ip/normalize.js'
import { errors, NoQuery } from '../schemas/common.js'
import { IpView } from '../schemas/service.js'
import type { App } from './types.js'

export function registerIpRoutes(app: App): void {
  app.get(
    '/v1/ip',
    {
      config: { auth: 'optional' },
      schema: {
        operationId: 'getIp',
        summary: 'The public IP address the service sees for this request',
        description:
          'Behind a proxy (TRUST_PROXY) the address is the X-Forwarded-For entry your own proxy appended; what the caller writes there is never used.',
        tags: ['service'],
        security: [],
        querystring: NoQuery,
        response: { 200: IpView, ...errors(400, 429) },
      },
    },
    async (request) => {
      const parsed = parseIp(request.ip)
      return { ip: parsed?.ip ?? request.ip, version: parsed?.version ?? 0 }
    },
  )
}
