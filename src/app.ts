import { isIP } from 'node:net'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Ajv } from 'ajv'
import Fastify, { type FastifyServerOptions, LogController } from 'fastify'
import { envDefault } from './config/schema.js'
import { composeServices, type ServiceOptions } from './context.js'
import type { Metrics } from './observability/metrics.js'
import { Readiness } from './observability/readiness.js'
import type { Tracing } from './observability/tracing.js'
import { answerFrameworkError, formatValidation, registerErrorHandling } from './plugins/errors.js'
import { registerGuard } from './plugins/guard.js'
import { registerHttpConventions } from './plugins/http-conventions.js'
import { registerJsonBody, registerNoNul } from './plugins/json-body.js'
import { registerObservability, requestIdOf } from './plugins/observability.js'
import { registerOpenApi } from './plugins/openapi.js'
import { registerSecurityHeaders } from './plugins/security-headers.js'
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
import { registerProbeRoutes } from './routes/probes.js'
import { registerReplayRoutes } from './routes/replay.js'
import { registerRuleRoutes } from './routes/rules.js'
import { registerScoreRoutes } from './routes/score.js'
import { registerTrapRoutes } from './routes/traps.js'
import type { App, RegisteredRoute } from './routes/types.js'
import { registerWebhookRoutes } from './routes/webhooks.js'

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
  /** Compilers shared with other apps of this process (plugins/schema-compilers.ts); default: the app's own. */
  schemaCompilers?: NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
  /** Metrics, probes and traces (src/observability/, docs/operations.md). */
  observability?: {
    metrics?: Metrics | undefined
    tracing?: Tracing | undefined
    /** Default: always ready once built. */
    readiness?: Readiness | undefined
    /** false: /livez, /readyz and /metrics are on the admin listener (VERDICT_ADMIN_PORT), not here. */
    probes?: boolean
    /** /metrics here needs this bearer token (VERDICT_METRICS_TOKEN); without one it is not served here. */
    metricsToken?: string | undefined
  }
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
    ...(opts.schemaCompilers ? { schemaController: { compilersFactory: opts.schemaCompilers } } : {}),
    requestIdHeader: false,
    genReqId: requestIdOf,
    frameworkErrors: answerFrameworkError,
    // Path parameters are bounded by their schemas (device ids up to 256 characters), not by the router.
    routerOptions: { maxParamLength: 1024 },
    // Fastify's two lines per request are replaced by one of ours (plugins/observability.ts).
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>()

  // A JSON API: other content types are 415 rather than strings that fail validation.
  app.removeContentTypeParser('text/plain')
  registerJsonBody(app)
  registerNoNul(app)

  // Built once; each request's context is a view over it (src/context.ts).
  const obs = opts.observability ?? {}
  const services = composeServices({ ...opts, signals: obs.metrics ?? opts.signals })
  app.decorate('services', services)
  obs.metrics?.attach({
    queueDepth: () => services.writer.depth,
    lagMs: () => services.overload.status().lagMs,
    dbStats: () => services.store.db.stats?.(),
    redis: () => services.cluster().redis,
    sources: () => services.intel.sources(),
    now: () => services.clock.now(),
    webhooks: () => services.webhooks.stats(),
  })
  const readiness = obs.readiness ?? new Readiness('ready')
  readiness.attach({ ping: () => services.store.db.ping(), shedding: () => services.overload.shedding() })
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
  registerSecurityHeaders(app)
  // Before the guard: its refusals are logged, counted and traced like any answer.
  registerObservability(app, { metrics: obs.metrics, tracing: obs.tracing })
  registerGuard(app, services)
  await registerHttpConventions(app)
  await registerOpenApi(app, services.version)

  registerHealthRoutes(app)
  if (obs.probes !== false)
    registerProbeRoutes(app, {
      readiness,
      metrics: obs.metricsToken === undefined ? undefined : obs.metrics,
      metricsToken: obs.metricsToken,
    })
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
  registerWebhookRoutes(app)
  registerConsoleRoutes(app)
  registerConsoleStatic(app)

  await app.ready()
  return app
}
