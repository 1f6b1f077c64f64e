import { Type } from '@fastify/type-provider-typebox'
import { Digits, Nullable, Strict } from './common.js'

export const ObservationsParams = Strict({
  deviceId: Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'raw fingerprint (device_id) or a resolved_id from a score response',
  }),
})

export const ObservationsQuery = Strict({
  hours: Type.Optional(Digits('only the last N hours, 1-87600 (default: everything)')),
})

export const Observations = Type.Object({
  deviceId: Type.String({ description: 'as asked' }),
  hours: Nullable(Type.Integer()),
  observations: Type.Array(
    Type.Object({
      createdMs: Type.Integer(),
      eventId: Type.String(),
      deviceId: Nullable(Type.String({ description: 'raw fingerprint; null when only a token was sent' })),
      resolvedId: Type.String(),
      rung: Type.Integer({ description: '1 device token, 2 fingerprint + network, 3 neither' }),
      resolution: Type.String({ description: 'deterministic (rung 1) or probabilistic' }),
      networkPrefix: Nullable(Type.String()),
      asn: Nullable(Type.Integer()),
      country: Nullable(Type.String()),
      connectionType: Nullable(Type.String()),
      verdict: Type.String(),
    }),
    { description: 'newest first, at most 1000' },
  ),
})
