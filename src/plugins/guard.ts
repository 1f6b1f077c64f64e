import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppServices } from '../context.js'
import { ApiError } from '../errors.js'
import { authenticate, extractApiKey } from '../services/access/auth.js'
import { CSRF_HEADER, sessionAuth, sessionCookie } from '../services/console/console-auth.js'
import { clientBucket, type LimitResult } from '../services/runtime/rate-limiter.js'

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

/**
 * Authentication then rate limiting, before the body is even parsed. Route config `auth` says what a
 * /v1 route needs: 'key' (the default), 'optional' (works without a key, limited per client IP) or
 * 'none' (health, openapi: limited per client IP, keys ignored). Routes outside /v1 (traps, the docs
 * page) have no mode and pass untouched. Failed key attempts are throttled per client IP (AuthThrottle).
 * 'publishable' (the beacon) needs a pk_ key, in the header or in the body's `key` field (read once the
 * body is parsed), and is limited per key and per client IP; a pk_ key on
 * any other keyed or optional route is refused (401), so a key copied out of a web page reads nothing.
 * 'console' routes (/console/api) take a console session cookie only. A keyed or optional /v1 route
 * called without a key but with a session cookie takes the session as its credential: the console
 * reads and writes through the same routes and services as the API, as the session's tenant.
 */
export function registerGuard(app: FastifyInstance, deps: AppServices): void {
  /** The per-client-address budget of routes used without a key (and of the public beacon). */
  const keyless = (request: FastifyRequest, now: number) =>
    deps.limiter.hit(`ip:${clientBucket(request.ip)}`, deps.keylessRateLimit, now)

  app.decorateRequest('auth', null)
  app.addHook('onRequest', async (request, reply) => {
    deps.store.invalidation.poll()
    const mode = request.routeOptions.config.auth
    if (mode === undefined) return
    // Health and the API document always answer; everything else is refused first when overloaded.
    if (mode !== 'none') deps.overload.check()
    const now = deps.clock.now()
    if (mode === 'none') return enforce(reply, await keyless(request, now))

    const raw = extractApiKey(request.headers)
    const cookie = sessionCookie(request.headers.cookie)
    if (mode === 'console' || (mode !== 'publishable' && raw === undefined && cookie !== undefined)) {
      const refused = deps.throttle.refuse(request.ip, undefined, now)
      if (refused) {
        throw new ApiError('rate_limited', 'too many failed attempts from this address; retry later', {
          'Retry-After': String(refused.retryAfterSeconds),
        })
      }
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
      return enforce(
        reply,
        await deps.limiter.hit(`console:${auth.console.userId}`, auth.tenant.rateLimit, now),
      )
    }
    if (mode === 'publishable' && raw === undefined) {
      // The beacon's simple form carries its key in the body (docs/beacon.md): the per-address limit
      // applies before the body is read, the key after (preValidation below).
      return enforce(reply, await keyless(request, now))
    }
    return keyed(request, reply, mode, raw, now)
  })

  // The beacon's body-key form: the body is parsed (JSON shape checked), not yet validated. Callback
  // style: every other request passes with no promise.
  app.addHook('preValidation', (request, reply, done) => {
    if (request.routeOptions.config.auth !== 'publishable' || request.auth) return done()
    const body = request.body as { key?: unknown } | null | undefined
    const raw = typeof body?.key === 'string' && body.key.trim() ? body.key.trim() : undefined
    keyed(request, reply, 'publishable', raw, deps.clock.now(), false).then(() => done(), done)
  })

  /** Key authentication, the key's mode check and its rate limits. */
  async function keyed(
    request: FastifyRequest,
    reply: FastifyReply,
    mode: NonNullable<FastifyContextConfig['auth']>,
    raw: string | undefined,
    now: number,
    limitAddress = true,
  ): Promise<void> {
    const needsKey = mode === 'key' || mode === 'publishable'
    if (raw !== undefined || needsKey) {
      // Refused before any key lookup: guessing keys costs the guesser, not the database.
      const refused = deps.throttle.refuse(request.ip, raw, now)
      if (refused) {
        throw new ApiError(
          'rate_limited',
          `too many failed API-key attempts from this address (limit ${refused.limit} per minute); retry later`,
          { 'Retry-After': String(refused.retryAfterSeconds) },
        )
      }
    }
    if (raw !== undefined) {
      request.auth = await authenticate(deps.store, raw, now)
      if (request.auth) deps.throttle.succeeded(raw)
      else {
        deps.throttle.forget(raw)
        deps.throttle.failed(request.ip, now)
      }
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
    if (mode === 'publishable' && limitAddress) enforce(reply, await keyless(request, now))
    enforce(
      reply,
      request.auth
        ? await deps.limiter.hit(`key:${request.auth.keyId}`, request.auth.tenant.rateLimit, now)
        : await keyless(request, now),
    )
  }
}
