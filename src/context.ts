import type { FastifyRequest } from 'fastify'
import { AI_OFF } from './ai/config.js'
import { createExplainer, type Explainer } from './ai/index.js'
import { envDefault } from './config/schema.js'
import { ApiError } from './errors.js'
import type { Intel } from './intel/index.js'
import { NO_SIGNALS, type Signals } from './observability/signals.js'
import { AuthThrottle } from './services/access/auth-throttle.js'
import { PASSWORD_COST, type PasswordCost, SignInThrottle } from './services/console/console-auth.js'
import { Ja4Signatures } from './services/devices/ja4-signatures.js'
import { AsnRates } from './services/network/asn-rates.js'
import { TrapRecorder } from './services/network/traps.js'
import { type ClusterStatus, singleNode } from './services/runtime/cluster.js'
import { GroupWriter } from './services/runtime/group-writer.js'
import { OverloadGuard, type OverloadLimits } from './services/runtime/overload.js'
import { type Limiter, RateLimiter } from './services/runtime/rate-limiter.js'
import { type TenantLimits, TenantWork } from './services/runtime/tenant-work.js'
import { type DeliveryOptions, WebhookDispatcher } from './services/webhooks/dispatcher.js'
import type { Tenant } from './store/access/tenants.js'
import type { Store } from './store/index.js'
import type { Clock } from './util/clock.js'
import type { Hasher } from './util/secrets.js'

/**
 * The composition of the service: what the app builds once (AppServices) and the one context every
 * service verb receives (RequestContext, or TenantContext once a key has named the tenant).
 */

/** What the caller of buildApp provides; everything else is built here. */
export interface ServiceOptions {
  store: Store
  clock: Clock
  hasher: Hasher
  intel: Intel
  version?: string
  /** Default: VERDICT_KEYLESS_RATE_LIMIT's default. */
  keylessRateLimit?: number
  /** Failed API-key attempts per client IP per minute before 429 (default AUTH_FAILURES_PER_MINUTE). */
  authFailureLimit?: number
  /** The AI explanation layer; without one, reason_text stays templated. */
  explainer?: Explainer
  /** The in-memory ASN rates the scoring path reads; the `asn-rates` job refreshes them (src/jobs/). */
  asnRates?: AsnRates
  /** The in-memory JA4 spoofing signatures; the `ja4-signatures-cache` job refreshes them (src/jobs/). */
  ja4Signatures?: Ja4Signatures
  /** Lower-cased header a trusted edge passes the client's JA4 in (VERDICT_JA4_HEADER); see src/tls/request.ts. */
  ja4Header?: string | undefined
  /** Request limits; default: this process's memory. With Redis, shared by the nodes (src/redis/). */
  limiter?: Limiter
  /** How this node shares state, for health; default: one process on its own. */
  cluster?: ClusterStatus
  /** Load-shedding bounds; default: those of VERDICT_MAX_QUEUE and VERDICT_MAX_LAG_MS. */
  overload?: Partial<OverloadLimits>
  /** Where the domain reports metrics and spans (src/observability/); default: nowhere. */
  signals?: Signals
  /** Per-tenant bounds on heavy work, keys and console users; default: their VERDICT_* defaults. */
  tenantLimits?: Partial<TenantLimits>
  /** Webhook delivery; default: https to public addresses only, system CAs. */
  webhooks?: DeliveryOptions
  /** scrypt cost of new console password hashes; default PASSWORD_COST (only tests pass a lower one). */
  passwordCost?: PasswordCost
}

/** Everything a request may use, built once per app and shared by every request. */
export interface AppServices {
  readonly store: Store
  readonly clock: Clock
  readonly hasher: Hasher
  readonly intel: Intel
  readonly version: string
  /** Group commit of the scoring write path. */
  readonly writer: GroupWriter
  readonly asnRates: AsnRates
  readonly ja4Signatures: Ja4Signatures
  readonly ja4Header: string | undefined
  readonly explainer: Explainer
  readonly traps: TrapRecorder
  /** Requests per minute per key (or, keyless, per client IP). */
  readonly limiter: Limiter
  readonly keylessRateLimit: number
  /** Failed API-key attempts per client IP. */
  readonly throttle: AuthThrottle
  /** Failed console sign-ins per client IP and per email. */
  readonly signInThrottle: SignInThrottle
  readonly passwordCost: PasswordCost
  /** How this node shares state with the others (health). */
  readonly cluster: ClusterStatus
  /** Refuses new work with 503 while the process is overloaded. */
  readonly overload: OverloadGuard
  /** Metrics and spans of the domain (src/observability/signals.ts). */
  readonly signals: Signals
  /** Admits one tenant's heavy work (simulations) and holds its key and user caps. */
  readonly tenantWork: TenantWork
  /** Sends the webhook outbox (started by server.ts only). */
  readonly webhooks: WebhookDispatcher
}

/** One request's view of the services: the services plus who the request acts for. */
export interface RequestContext extends AppServices {
  /** The tenant of the valid API key the request carried; null on routes that work without one. */
  readonly tenant: Tenant | null
  readonly requestId: string
}

/** The context of an authenticated request: every query it makes is scoped by this tenant. */
export interface TenantContext extends RequestContext {
  readonly tenant: Tenant
}

export function composeServices(opts: ServiceOptions): AppServices {
  const signals = opts.signals ?? NO_SIGNALS
  const writer = new GroupWriter(opts.store.db, opts.store.usage, undefined, undefined, signals)
  const limiter = opts.limiter ?? new RateLimiter()
  return {
    store: opts.store,
    clock: opts.clock,
    hasher: opts.hasher,
    intel: opts.intel,
    version: opts.version ?? '1.0.0',
    writer,
    asnRates: opts.asnRates ?? new AsnRates(),
    ja4Signatures: opts.ja4Signatures ?? new Ja4Signatures(),
    ja4Header: opts.ja4Header,
    explainer: opts.explainer ?? createExplainer(AI_OFF),
    traps: new TrapRecorder(opts.store, opts.clock, opts.hasher),
    limiter,
    keylessRateLimit: opts.keylessRateLimit ?? envDefault('VERDICT_KEYLESS_RATE_LIMIT'),
    throttle: new AuthThrottle(opts.authFailureLimit),
    signInThrottle: new SignInThrottle(limiter, opts.hasher),
    passwordCost: opts.passwordCost ?? PASSWORD_COST,
    cluster: opts.cluster ?? singleNode('local'),
    overload: new OverloadGuard(
      writer,
      {
        maxQueue: opts.overload?.maxQueue ?? envDefault('VERDICT_MAX_QUEUE'),
        maxLagMs: opts.overload?.maxLagMs ?? envDefault('VERDICT_MAX_LAG_MS'),
      },
      signals,
    ),
    signals,
    tenantWork: new TenantWork({
      simulationsPerTenant: envDefault('VERDICT_SIMULATIONS_PER_TENANT'),
      simulatedEventsPerMinute: envDefault('VERDICT_SIMULATED_EVENTS_PER_MINUTE'),
      keysPerTenant: envDefault('VERDICT_MAX_KEYS_PER_TENANT'),
      consoleUsersPerTenant: envDefault('VERDICT_MAX_CONSOLE_USERS_PER_TENANT'),
      ...opts.tenantLimits,
    }),
    webhooks: new WebhookDispatcher(
      opts.store,
      opts.clock,
      opts.webhooks ?? { allowHttp: false, allowPrivate: false },
    ),
  }
}

/**
 * A context over `services`. The services are its prototype, so a request costs one object of two
 * fields instead of a copy of every service. A spread copies own fields only: never spread a context.
 */
export function contextFor(services: AppServices, tenant: Tenant, requestId: string): TenantContext
export function contextFor(services: AppServices, tenant: Tenant | null, requestId: string): RequestContext
export function contextFor(services: AppServices, tenant: Tenant | null, requestId: string): RequestContext {
  const ctx = Object.create(services) as { tenant: Tenant | null; requestId: string }
  ctx.tenant = tenant
  ctx.requestId = requestId
  return ctx as RequestContext
}

export const hasTenant = (ctx: RequestContext): ctx is TenantContext => ctx.tenant !== null

/** The context of a request, with its tenant when the guard authenticated a key. */
export function requestContext(request: FastifyRequest): RequestContext {
  return contextFor(request.server.services, request.auth?.tenant ?? null, request.id)
}

/** The context of a request that needs a tenant; 401 without one (the guard normally answered already). */
export function tenantContext(request: FastifyRequest): TenantContext {
  const auth = request.auth
  if (!auth) throw new ApiError('unauthorized', 'missing API key')
  return contextFor(request.server.services, auth.tenant, request.id)
}
