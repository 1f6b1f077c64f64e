import { isIP } from 'node:net'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Ajv } from 'ajv'
import Fastify, { type FastifyServerOptions, LogController } from 'fastify'
import { envDefault } from './config/schema.js'
import { composeServices, type ServiceOptions } from './context.js'
import {
  answerFrameworkError,
  formatValidation,
  newRequestId,
  registerErrorHandling,
} from './plugins/errors.js'
import { registerGuard } from './plugins/guard.js'
import { registerHttpConventions } from './plugins/http-conventions.js'
import { registerJsonBody, registerNoNul } from './plugins/json-body.js'
import { registerOpenApi } from './plugins/openapi.js'
import { registerBeaconRoutes, registerBeaconScriptRoutes } from './routes/beacon.js'
import { registerCheckRoutes } from './routes/checks.js'
import { registerConfigRoutes } from './routes/config.js'
import { registerConsoleRoutes } from './routes/console.js'
import { registerConsoleStatic } from './routes/console-static.js'
import { registerDeviceRoutes } from './routes/devices.js'
import { registerEventRoutes } from './routes/events.js'
import { registerHealthRoutes } from './routes/health.js'
import { registerIpRoutes } from './routes/ip.js'
import { registerLabelRoutes } from './routes/labels.js'
import { registerListRoutes } from './routes/lists.js'
import { registerLookupRoutes } from './routes/lookups.js'
import { registerOpenApiRoute } from './routes/openapi.js'
import { registerPrivacyRoutes } from './routes/privacy.js'
import { registerReplayRoutes } from './routes/replay.js'
import { registerRuleRoutes } from './routes/rules.js'
import { registerScoreRoutes } from './routes/score.js'
import { registerTrapRoutes } from './routes/traps.js'
import type { App, RegisteredRoute } from './routes/types.js'

/**
 * Fastify's own forms are not used as they are: `true` trusts every hop (the caller's leftmost
 * X-Forwarded-For entry would win) and a bare number trusts nothing. A hop count becomes a function
 * over proxy-addr's walk, which starts at the socket peer (i = 0) and moves right to left.
 */
function trustProxyOption(setting: AppOptions['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (setting === undefined || setting === false) return false
  if (Array.isArray(setting)) return setting
  const hops = setting === true ? 1 : setting
  if (hops < 1) return false
  return (_addr: string, i: number) => i < hops
}

/** Ajv format `ip`: any IPv4 or IPv6 address. */
function addIpFormat(ajv: Ajv): Ajv {
  ajv.addFormat('ip', (s: string) => isIP(s) !== 0)
  return ajv
}

export interface AppOptions extends ServiceOptions {
  /** `true` = one proxy hop; a number of hops; or the proxies' addresses/CIDRs. Off by default. */
  trustProxy?: boolean | number | string[]
  /** Default: VERDICT_BODY_LIMIT_BYTES's default. */
  bodyLimitBytes?: number
  logger?: FastifyServerOptions['logger']
}

/**
 * Builds the Fastify app with every route registered. No side effects: nothing listens, nothing is
 * opened, no timer starts (background jobs are src/jobs/, started by server.ts).
 */
export async function buildApp(opts: AppOptions): Promise<App> {
  const app = Fastify({
    logger: opts.logger ?? false,
    trustProxy: trustProxyOption(opts.trustProxy),
    bodyLimit: opts.bodyLimitBytes ?? envDefault('VERDICT_BODY_LIMIT_BYTES'),
    // Strict validation: unknown fields are rejected (never stripped) and types are never coerced.
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false },
      plugins: [addIpFormat],
    },
    schemaErrorFormatter: formatValidation,
    requestIdHeader: false,
    genReqId: newRequestId,
    frameworkErrors: answerFrameworkError,
    // Path parameters are bounded by their schemas (device ids up to 256 characters), not by the router.
    routerOptions: { maxParamLength: 1024 },
    // Per-request access logs cost throughput on the scoring path; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>()

  // A JSON API: other content types are 415 rather than strings that fail validation.
  app.removeContentTypeParser('text/plain')
  registerJsonBody(app)
  registerNoNul(app)

  // Built once; each request's context is a view over it (src/context.ts).
  const services = composeServices(opts)
  app.decorate('services', services)
  app.addHook('onClose', async () => services.overload.close())

  // Every /v1 route needs a key unless it says otherwise. The table of routes feeds the security tests.
  const routes: RegisteredRoute[] = []
  app.decorate('routeTable', routes)
  // The console's own API takes a console session unless a route says otherwise (src/routes/console.ts).
  app.addHook('onRoute', (route) => {
    const isConsole = route.url.startsWith('/console/api/')
    if (!route.url.startsWith('/v1/') && !isConsole) return
    route.config = { auth: isConsole ? 'console' : 'key', ...route.config }
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, auth: route.config.auth ?? 'key' })
    }
  })
  registerErrorHandling(app)
  registerGuard(app, services)
  await registerHttpConventions(app)
  await registerOpenApi(app, services.version)

  registerHealthRoutes(app)
  registerIpRoutes(app)
  registerOpenApiRoute(app)
  registerConfigRoutes(app)
  registerListRoutes(app)
  registerCheckRoutes(app)
  registerLookupRoutes(app)
  registerScoreRoutes(app)
  registerEventRoutes(app)
  registerLabelRoutes(app)
  registerRuleRoutes(app)
  registerReplayRoutes(app)
  registerPrivacyRoutes(app)
  registerTrapRoutes(app)
  registerDeviceRoutes(app)
  registerBeaconRoutes(app)
  registerBeaconScriptRoutes(app)
  registerConsoleRoutes(app)
  registerConsoleStatic(app)

  await app.ready()
  return app
}
