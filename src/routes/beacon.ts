import type { FastifyReply, FastifyRequest } from 'fastify'
import { BEACON_KEY_HEADER } from '../beacon/contract.js'
import { tenantContext } from '../context.js'
import { ApiError } from '../errors.js'
import { BeaconRequest, BeaconResponse } from '../schemas/beacon.js'
import { errors } from '../schemas/common.js'
import { recordBeacon } from '../services/beacon.js'
import type { App } from './types.js'

/** Browsers cache an answered preflight this long (seconds). */
const PREFLIGHT_MAX_AGE = 600

/**
 * Every beacon answer, refusals included, names the page's origin: the preflight carries no key, so it
 * cannot know the key's origins, and the POST enforces them (403). Letting the page read a refusal
 * shows the integrator the reason instead of an opaque CORS failure; the body holds nothing else.
 */
function cors(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin
  if (origin) reply.header('access-control-allow-origin', origin)
  reply.header('vary', 'origin')
}

export function registerBeaconRoutes(app: App): void {
  app.options('/v1/beacon', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    cors(request, reply)
    reply.header('access-control-allow-methods', 'POST')
    reply.header('access-control-allow-headers', `content-type, ${BEACON_KEY_HEADER}`)
    reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE))
    return reply.code(204).send()
  })

  app.post(
    '/v1/beacon',
    {
      config: { auth: 'publishable' },
      // Outside the OpenAPI document: only the browser library calls it (docs/beacon.md).
      schema: {
        hide: true,
        body: BeaconRequest,
        response: { 200: BeaconResponse, ...errors(400, 401, 403, 429) },
      },
      onSend: async (request, reply, payload) => {
        cors(request, reply)
        return payload
      },
    },
    async (request) => {
      const auth = request.auth
      if (!auth) throw new ApiError('unauthorized', 'missing API key')
      return recordBeacon(
        tenantContext(request),
        { auth, origin: request.headers.origin, ip: request.ip, userAgent: request.headers['user-agent'] },
        request.body,
      )
    },
  )
}
