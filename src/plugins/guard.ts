import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppServices } from '../context.js'
import { ApiError } from '../errors.js'
import { authenticate, extractApiKey, hashApiKey } from '../services/access/auth.js'
import { CSRF_HEADER, sessionAuth, sessionCookie } from '../services/console/console-auth.js'
import { clientBucket, type LimitResult } from '../services/runtime/rate-limiter.js'

type Mode = NonNullable<FastifyContextConfig['auth']>

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function limitHeaders(reply: FastifyReply, r: LimitResult): void {
  reply.header('RateLimit-Limit', String(r.limit))
  reply.header('RateLimit-Remaining', String(r.remaining))
  reply.header('RateLimit-Reset', String(r.resetSeconds))
}

function enforce(reply: FastifyReply, r: LimitResult): void {
  limitHeaders(reply, r)
  if (!r.allowed) {
    throw new ApiError('rate_limited', `rate limit of ${r.limit} requests per minute exceeded; retry later`, {
      'Retry-After': String(r.retryAfterSeconds),
    })
  }
}

/** What one request brings to its mode's handler: the credentials it sent, read once. */
interface Attempt {
  request: FastifyRequest
  reply: FastifyReply
  /** The API key of the x-api-key or Authorization header, if any. */
  raw: string | undefined
  /** The console session cookie, if any. */
  cookie: string | undefined
  now: number
}

type Handler = (a: Attempt) => Promise<void>

/**
 * Authentication then rate limiting, before the body is even parsed. Route config `auth` says what a
 * /v1 route needs, and each mode has one handler in the table below:
 * - 'key' (the default): a secret key; with no key but a session cookie, the session (see 'console').
 * - 'optional': works without a key, limited per client address; a key or a session is used if sent.
 * - 'none' (health, openapi, console sign-in): limited per client address, keys ignored.
 * - 'publishable' (the beacon): a pk_ key in the header or in the body's `key` field (read once the
 *   body is parsed, in preValidation), limited per key and per client address.
 * - 'console' (/console/api): the console session cookie only.
 * Routes outside /v1 and /console/api (traps, the docs page) have no mode and pass untouched. Failed
 * key attempts are throttled per client address (AuthThrottle). A pk_ key on any keyed or optional
 * route is refused (401), so a key copied out of a web page reads nothing. The console reads and
 * writes through the same /v1 routes and services as the API, as the session's tenant.
 */
export function registerGuard(app: FastifyInstance, deps: AppServices): void {
  /**
   * Counts one request, on the clock read now rather than the request's arrival stamp: a request whose
   * key lookup took longer is counted after requests that arrived later, and GCRA must see the times it
   * counts in order (an earlier time after a later one finds the budget a moment less refilled).
   */
  const hit = (bucket: string, limit: number) => deps.limiter.hit(bucket, limit, deps.clock.now())
  /** The per-client-address budget of routes used without a key (and of the public beacon). */
  const keyless = (request: FastifyRequest) => hit(`ip:${clientBucket(request.ip)}`, deps.keylessRateLimit)

  /** 429 before any key or session lookup when this address has failed too often. */
  function refuseThrottled(
    request: FastifyRequest,
    raw: string | undefined,
    now: number,
    what: string,
  ): void {
    const refused = deps.throttle.refuse(request.ip, raw, now)
    if (!refused) return
    const message =
      what === 'session'
        ? 'too many failed attempts from this address; retry later'
        : `too many failed API-key attempts from this address (limit ${refused.limit} per minute); retry later`
    throw new ApiError('rate_limited', message, { 'Retry-After': String(refused.retryAfterSeconds) })
  }

  /** The console session as the credential, then the signed-in user's rate limit. */
  async function session({ request, reply, cookie, now }: Attempt): Promise<void> {
    refuseThrottled(request, undefined, now, 'session')
    if (cookie === undefined) throw new ApiError('unauthorized', 'no console session; sign in first')
    const csrf = request.headers[CSRF_HEADER]
    const auth = await sessionAuth(
      deps,
      cookie,
      typeof csrf === 'string' ? csrf : undefined,
      !SAFE_METHODS.has(request.method),
    ).catch((err: unknown) => {
      deps.throttle.failed(request.ip, now)
      throw err
    })
    request.auth = auth
    enforce(reply, await hit(`console:${auth.console.userId}`, auth.tenant.rateLimit))
  }

  /** Key authentication, the key's kind check and its rate limits. */
  async function keyed(mode: Mode, a: Attempt, limitAddress = true): Promise<void> {
    const { request, reply, raw, now } = a
    const needsKey = mode === 'key' || mode === 'publishable'
    // Refused before any key lookup: guessing keys costs the guesser, not the database.
    if (raw !== undefined || needsKey) refuseThrottled(request, raw, now, 'key')
    if (raw !== undefined) {
      // Hashed once for the lookup and the throttle's memory of keys that authenticated.
      const keyHash = hashApiKey(raw)
      request.auth = await authenticate(deps.store, raw, now, keyHash)
      if (!request.auth) {
        deps.throttle.forget(keyHash)
        deps.throttle.failed(request.ip, now)
      } else if (request.auth.publishable === (mode === 'publishable')) {
        // Only a secret key earns a pass past the bound: a publishable key is public, it proves nothing.
        if (!request.auth.publishable) deps.throttle.succeeded(keyHash)
      } else deps.throttle.failed(request.ip, now)
    }
    if (request.auth && request.auth.publishable !== (mode === 'publishable')) {
      throw new ApiError(
        'unauthorized',
        request.auth.publishable
          ? 'publishable (pk_) keys work only on POST /v1/beacon'
          : 'this route takes a publishable (pk_) key, never a secret key',
      )
    }
    if (needsKey && !request.auth) {
      if (raw === undefined) deps.throttle.failed(request.ip, now)
      throw new ApiError(
        'unauthorized',
        raw
          ? 'invalid, revoked or rotated API key'
          : mode === 'publishable'
            ? 'missing API key (x-api-key header, or `key` in the beacon body)'
            : 'missing API key (x-api-key header or Authorization: Bearer)',
      )
    }
    // The beacon is public: one page key must not let one address drain the tenant's budget alone.
    if (mode === 'publishable' && limitAddress) enforce(reply, await keyless(request))
    enforce(
      reply,
      request.auth
        ? await hit(`key:${request.auth.keyId}`, request.auth.tenant.rateLimit)
        : await keyless(request),
    )
  }

  /**
   * A secret key sent to a keyless route that reads one (health): throttled and counted like any key
   * attempt, but a wrong one only leaves the request keyless (no 401).
   */
  async function optionalSecretKey({ request, raw, now }: Attempt): Promise<void> {
    if (raw === undefined) return
    refuseThrottled(request, raw, now, 'key')
    const keyHash = hashApiKey(raw)
    const auth = await authenticate(deps.store, raw, undefined, keyHash)
    if (auth && !auth.publishable) {
      deps.throttle.succeeded(keyHash)
      request.auth = auth
    } else {
      if (!auth) deps.throttle.forget(keyHash)
      deps.throttle.failed(request.ip, now)
    }
  }

  /** A keyed or optional /v1 route called with a session cookie and no key takes the session. */
  const keyOrSession =
    (mode: 'key' | 'optional'): Handler =>
    (a) =>
      a.raw === undefined && a.cookie !== undefined ? session(a) : keyed(mode, a)

  const handlers: Record<Mode, Handler> = {
    none: async (a) => {
      enforce(a.reply, await keyless(a.request))
      if (a.raw !== undefined && a.request.routeOptions.config.readsKey) await optionalSecretKey(a)
    },
    console: session,
    key: keyOrSession('key'),
    optional: keyOrSession('optional'),
    // The beacon's simple form carries its key in the body (docs/beacon.md): the per-address limit
    // applies before the body is read, the key after (preValidation below).
    publishable: async (a) =>
      a.raw === undefined ? enforce(a.reply, await keyless(a.request)) : keyed('publishable', a),
  }

  app.decorateRequest('auth', null)
  // Other nodes' writes (revoked keys, changed config) are picked up before anything reads them.
  app.addHook('onRequest', (_request, _reply, done) => {
    deps.store.invalidation.poll()
    done()
  })
  app.addHook('onRequest', async (request, reply) => {
    const mode = request.routeOptions.config.auth
    if (mode === undefined) return
    // Health and the API document always answer; everything else is refused first when overloaded.
    if (mode !== 'none') deps.overload.check()
    await handlers[mode]({
      request,
      reply,
      raw: extractApiKey(request.headers),
      cookie: sessionCookie(request.headers.cookie, request.protocol === 'https'),
      now: deps.clock.now(),
    })
  })

  // The beacon's body-key form: the body is parsed (JSON shape checked), not yet validated. Callback
  // style: every other request passes with no promise.
  app.addHook('preValidation', (request, reply, done) => {
    if (request.routeOptions.config.auth !== 'publishable' || request.auth) return done()
    const body = request.body as { key?: unknown } | null | undefined
    const raw = typeof body?.key === 'string' && body.key.trim() ? body.key.trim() : undefined
    const attempt = { request, reply, raw, cookie: undefined, now: deps.clock.now() }
    keyed('publishable', attempt, false).then(() => done(), done)
  })
}
