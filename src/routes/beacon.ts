import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BEACON_KEY_HEADER } from '../beacon/contract.js'
import { tenantContext } from '../context.js'
import { ApiError } from '../errors.js'
import { BEACON_BODY_LIMIT, registerPlainTextJson, smallBodyLimit } from '../plugins/json-body.js'
import { BeaconRequest, BeaconResponse } from '../schemas/beacon.js'
import { errors } from '../schemas/common.js'
import { recordBeacon } from '../services/devices/beacon.js'
import { type BeaconBuild, beaconScript } from '../services/devices/beacon-script.js'
import { ja4FromRequest } from '../tls/request.js'
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

/**
 * Two forms of the same POST: the library's, a CORS "simple" request (text/plain body holding the key,
 * so the browser sends no preflight), and the preflighted one (application/json, key in x-api-key).
 * Registered in their own plugin scope so that text/plain is read as JSON on this route only.
 */
export function registerBeaconRoutes(app: App): void {
  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>()
    registerPlainTextJson(scope)
    scope.options(
      '/v1/beacon',
      { config: { auth: 'none' }, schema: { hide: true } },
      async (request, reply) => {
        cors(request, reply)
        reply.header('access-control-allow-methods', 'POST')
        reply.header('access-control-allow-headers', `content-type, ${BEACON_KEY_HEADER}`)
        reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE))
        return reply.code(204).send()
      },
    )

    scope.post(
      '/v1/beacon',
      {
        config: { auth: 'publishable' },
        bodyLimit: smallBodyLimit(app, BEACON_BODY_LIMIT),
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
          {
            auth,
            origin: request.headers.origin,
            ip: request.ip,
            userAgent: request.headers['user-agent'],
            ja4: ja4FromRequest(request, request.server.services),
          },
          request.body,
        )
      },
    )
  })
}

/** `?v=` asks for one build; other query parameters (cache busters) are ignored, not refused. */
const ScriptQuery = Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) })

export function registerBeaconScriptRoutes(app: App): void {
  for (const [url, build] of [
    ['/v1/beacon.js', 'script'],
    ['/v1/beacon.mjs', 'module'],
  ] as const satisfies readonly (readonly [string, BeaconBuild])[]) {
    app.get(
      url,
      { config: { auth: 'none' }, schema: { hide: true, querystring: ScriptQuery } },
      async (request, reply) => {
        const s = beaconScript(build, request.query.v, request.headers['if-none-match'])
        // Public code: any page may load it, and a module import from another origin needs CORS.
        reply.header('access-control-allow-origin', '*')
        reply.header('etag', s.etag)
        reply.header('cache-control', s.cacheControl)
        reply.header('x-beacon-version', s.version)
        if (s.body === null) return reply.code(304).send()
        return reply.type('application/javascript; charset=utf-8').send(s.body)
      },
    )
  }
}
