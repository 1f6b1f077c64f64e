import { Type } from '@fastify/type-provider-typebox'
import { Digits, Nullable, Strict } from './common.js'
import { EventView, Stats } from './events.js'

export const SignInBody = Strict({
  email: Type.String({ minLength: 3, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  tenant: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'the tenant to sign in to, needed only when the same email and password open several',
    }),
  ),
})

export const SessionView = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  tenantId: Type.String(),
  tenantName: Type.String(),
  csrfToken: Type.String({ description: 'send back in x-csrf-token on every state-changing request' }),
  expiresMs: Type.Integer({ description: 'when the session ends unless used again sooner' }),
})

export const SignedOut = Type.Object({ signedOut: Type.Boolean() })

export const EventParams = Strict({ id: Type.String({ minLength: 1, maxLength: 128 }) })

export const EventDetail = Type.Object({
  event: EventView,
  explanation: Type.String({ description: 'the templated explanation of the recorded checks' }),
  labels: Type.Array(
    Type.Object({
      id: Type.Integer(),
      label: Type.String(),
      note: Nullable(Type.String()),
      createdMs: Type.Integer(),
    }),
  ),
  device: Nullable(
    Type.Object({
      resolvedId: Type.String(),
      profile: Type.Object({
        firstSeenMs: Nullable(Type.Integer()),
        lastSeenMs: Nullable(Type.Integer()),
        observations: Type.Integer(),
        distinctIps: Type.Integer(),
        accounts: Type.Integer(),
        countries: Type.Integer(),
        browser: Nullable(
          Type.Object({
            os: Nullable(Type.String()),
            browser: Nullable(Type.String()),
            mobile: Type.Boolean(),
            seenMs: Type.Integer(),
          }),
        ),
      }),
      timeline: Type.Array(
        Type.Object({
          createdMs: Type.Integer(),
          eventId: Type.String(),
          resolution: Type.String(),
          networkPrefix: Nullable(Type.String()),
          asn: Nullable(Type.Integer()),
          country: Nullable(Type.String()),
          connectionType: Nullable(Type.String()),
          verdict: Type.String(),
        }),
      ),
    }),
  ),
})

export const OverviewQuery = Strict({ hours: Type.Optional(Digits('window in hours, 1-720 (default 24)')) })

export const Overview = Type.Object({
  stats: Stats,
  hourly: Type.Array(
    Type.Object({
      hourMs: Type.Integer(),
      allow: Type.Integer(),
      review: Type.Integer(),
      block: Type.Integer(),
    }),
  ),
  quota: Type.Object({ period: Type.String(), used: Type.Integer(), limit: Type.Integer() }),
})

const KeyView = Type.Object({
  keyId: Type.String(),
  prefix: Type.String(),
  kind: Type.String(),
  origins: Type.Array(Type.String()),
  createdMs: Type.Integer(),
  revokedMs: Nullable(Type.Integer()),
  lastUsedMs: Nullable(
    Type.Integer({ description: 'last authenticated request, to the minute; null: never' }),
  ),
  replacedBy: Nullable(
    Type.String({ description: 'set when a rotation revoked it: the key that replaced it' }),
  ),
})

export const KeyList = Type.Object({ keys: Type.Array(KeyView) })

export const NewKeyBody = Strict({
  publishable: Type.Optional(Type.Boolean()),
  origins: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 20 })),
})

export const KeyParams = Strict({ keyId: Type.String({ minLength: 1, maxLength: 64 }) })

export const IssuedKey = Type.Object({
  keyId: Type.String(),
  apiKey: Type.String({ description: 'shown once; only its hash is stored' }),
})

export const Revoked = Type.Object({ keyId: Type.String(), revoked: Type.Boolean() })

export const UserList = Type.Object({
  users: Type.Array(Type.Object({ userId: Type.String(), email: Type.String(), createdMs: Type.Integer() })),
})

export const NewUserBody = Strict({
  email: Type.String({ minLength: 3, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
})

export const NewUser = Type.Object({ userId: Type.String(), tenantId: Type.String(), email: Type.String() })

export const ReviewQuery = Strict({ limit: Type.Optional(Digits('at most 200 (default 50)')) })

export const ReviewQueue = Type.Object({
  events: Type.Array(EventView, { description: 'oldest first, unlabelled only' }),
  total: Type.Integer({ description: 'unlabelled review events in all' }),
})

export const Defaults = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  thresholds: Type.Record(Type.String(), Type.Number()),
})
