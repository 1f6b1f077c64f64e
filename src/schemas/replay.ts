import { Type } from '@fastify/type-provider-typebox'
import { StrEnum, Strict } from './common.js'

export const ReplayRequest = Strict({
  event_id: Type.String({ minLength: 1, maxLength: 64, description: 'id of an event this tenant scored' }),
})

const Decision = Type.Object({
  score: Type.Number(),
  verdict: StrEnum(['allow', 'review', 'block'] as const),
  reasons: Type.Array(Type.String()),
})

export const Replay = Type.Object({
  recorded: Decision,
  replayed: Decision,
  identical: Type.Boolean({ description: 'same score, verdict, reason codes and checks' }),
  config_version: Type.Integer({ description: 'the config version the event was decided under' }),
  rules_version: Type.String({ description: 'the rules version the event was decided under' }),
})
