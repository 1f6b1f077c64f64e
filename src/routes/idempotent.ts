import { Type } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { tenantContext } from '../context.js'
import { errors } from '../schemas/common.js'
import { type Idem, idempotent } from '../services/runtime/idempotency.js'

/** The optional `Idempotency-Key` header of the routes whose retries must not count twice. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'a retry with the same key and body within 24 hours replays the first response (Idempotent-Replayed: true); the same key with another body answers 422',
    }),
  ),
})

/** The errors an idempotent route adds: a still-running duplicate (409), a reused key (422). */
export const idempotencyErrors = () => errors(409, 422)

/** Runs the route's verb under the request's Idempotency-Key; a replay is marked in a header. */
export async function replayable<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  run: (idem: Idem) => Promise<T>,
): Promise<T> {
  const ctx = tenantContext(request)
  const route = request.routeOptions.url ?? request.url
  const out = await idempotent(ctx, route, request.headers['idempotency-key'], request.body, run)
  if (out.replayed) reply.header('idempotent-replayed', 'true')
  return out.response
}
