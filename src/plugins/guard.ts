import type { FastifyInstance, FastifyReply } from 'fastify'
import { ApiError } from '../errors.js'
import { authenticate, extractApiKey } from '../services/auth.js'
import type { LimitResult, RateLimiter } from '../services/rate-limiter.js'
import type { Store } from '../store/index.js'
import type { Clock } from '../util/clock.js'

export interface GuardDeps {
  store: Store
  clock: Clock
  limiter: RateLimiter
  keylessRateLimit: number
}

function limitHeaders(reply: FastifyReply, r: LimitResult): void {
  reply.header('RateLimit-Limit', String(r.limit))
  reply.header('RateLimit-Remaining', String(r.remaining))
  reply.header('RateLimit-Reset', String(r.resetSeconds))
}

/**
 * Authentication then rate limiting, before the body is even parsed. Route config `auth` says what a
 * route needs: 'key' (the default for /v1), 'optional' (works without a key, limited per client IP)
 * or 'none' (health, ip, openapi).
 */
export function registerGuard(app: FastifyInstance, deps: GuardDeps): void {
  app.decorateRequest('auth', null)
  app.addHook('onRequest', async (request, reply) => {
    const mode = request.routeOptions.config.auth
    if (mode === undefined || mode === 'none') return
    const raw = extractApiKey(request.headers)
    if (raw) request.auth = await authenticate(deps.store, raw)
    if (mode === 'key' && !request.auth) {
      throw new ApiError(
        'unauthorized',
        raw
          ? 'invalid, revoked or rotated API key'
          : 'missing API key (x-api-key header or Authorization: Bearer)',
      )
    }
    const now = deps.clock.now()
    const r = request.auth
      ? deps.limiter.hit(`key:${request.auth.keyId}`, request.auth.tenant.rateLimit, now)
      : deps.limiter.hit(`ip:${request.ip}`, deps.keylessRateLimit, now)
    limitHeaders(reply, r)
    if (!r.allowed) {
      throw new ApiError(
        'rate_limited',
        `rate limit of ${r.limit} requests per minute exceeded; retry later`,
        {
          'Retry-After': String(r.resetSeconds),
        },
      )
    }
  })
}
