import { Type } from '@fastify/type-provider-typebox'
import { Nullable, StrEnum, Strict } from './common.js'

export const LabelBody = Strict({
  label: StrEnum(['fraud', 'chargeback', 'legit'] as const, 'the real outcome'),
  event_id: Type.Optional(Type.String({ maxLength: 64, description: 'id of an event this tenant scored' })),
  entities: Type.Optional(
    Strict({
      ip: Type.Optional(Type.String({ maxLength: 45, format: 'ip' })),
      email: Type.Optional(Type.String({ maxLength: 320, format: 'email' })),
      device_id: Type.Optional(Type.String({ maxLength: 256 })),
    }),
  ),
  note: Type.Optional(Type.String({ maxLength: 500 })),
})

/** Entity kinds: email, ip, phone, device or user. */
const Kinds = (description: string) => Type.Array(Type.String(), { description })

export const LabelResult = Type.Object({
  label_id: Type.String(),
  label: Type.String(),
  event_id: Nullable(Type.String()),
  network: Type.Object({
    shared: Type.Boolean({ description: 'whether this tenant contributes to the operator network' }),
    contributed: Kinds('kinds of the entities this label flagged in the operator network'),
  }),
  suppressed: Kinds('kinds of the entities a legit label suppressed for this tenant'),
})
