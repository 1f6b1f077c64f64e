import { Type } from '@fastify/type-provider-typebox'
import { Nullable } from './common.js'

const AiStatus = Type.Object(
  {
    configured: Type.Boolean(),
    provider: Nullable(Type.String()),
    model: Nullable(Type.String()),
    deadlineMs: Type.Integer(),
    recentFailures: Type.Integer({ description: 'provider failures in the last 10 minutes' }),
    lastFailure: Nullable(Type.String()),
  },
  { additionalProperties: true },
)

export const Health = Type.Object(
  {
    status: Type.String({
      description: '`ok`, or `degraded` when the database or a configured Redis is unreachable',
    }),
    reason: Type.Optional(
      Type.String({ description: 'when degraded: `database_unreachable` or `redis_unreachable`' }),
    ),
    // The rest only for a caller with a key (docs/security.md, Hardening II).
    version: Type.Optional(Type.String()),
    time: Type.Optional(Type.Integer({ description: 'server clock, ms' })),
    database: Type.Optional(Type.Object({ engine: Type.String(), reachable: Type.Boolean() })),
    ai: Type.Optional(AiStatus),
    checks: Type.Optional(
      Type.Object(
        {
          feeds: Type.Object({
            status: Type.Union([Type.Literal('ok'), Type.Literal('missing')], {
              description:
                '`missing` when a feed has no data: its signal is unknown (a `*_feed_not_loaded` warning)',
            }),
            missing: Type.Array(Type.String(), { description: 'feeds without data' }),
            fix: Nullable(Type.String({ description: 'how to load them' })),
          }),
          resolver: Type.Object({
            status: Type.Union(
              [
                Type.Literal('ok'),
                Type.Literal('broken'),
                Type.Literal('unreachable'),
                Type.Literal('unknown'),
              ],
              {
                description:
                  '`broken`: the DNS resolver cannot resolve the canary (a name that must exist), so no "no mail server" answer is believed and `email_no_mx` does not fire',
              },
            ),
            canary: Type.String({ description: 'the name probed (VERDICT_DNS_CANARY)' }),
            checkedAt: Nullable(
              Type.Integer({ description: 'when it was last probed, ms (the answer is cached)' }),
            ),
          }),
        },
        {
          additionalProperties: true,
          description: 'what works only in part; none of it makes the status degraded',
        },
      ),
    ),
    cluster: Type.Optional(
      Type.Object({
        node: Type.String({ description: 'random id of this process' }),
        limits: Type.String({
          description: '`cluster` (shared through Redis) or `node` (this process alone)',
        }),
        redis: Type.String({ description: '`ok`, `unreachable` or `not_configured`' }),
        problem: Nullable(Type.String()),
        jobs: Type.Array(Type.String(), { description: 'background jobs whose lease this node holds' }),
      }),
    ),
    sources: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String(),
          kind: Type.String(),
          loaded: Type.Boolean(),
          entries: Nullable(Type.Integer()),
          dataDate: Nullable(Type.String()),
          attribution: Nullable(Type.String()),
        }),
      ),
    ),
  },
  { additionalProperties: true },
)

export const IpView = Type.Object({
  ip: Type.String(),
  version: Type.Integer({ description: '4 or 6 (0 when the address could not be parsed)' }),
})
