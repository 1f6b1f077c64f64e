import { Type } from '@fastify/type-provider-typebox'
import { BEACON_FLAGS, type BeaconFlag, DEVICE_ID_PATTERN, VISIT_ID_PATTERN } from '../beacon/contract.js'
import { StrEnum, Strict } from './common.js'

/** The body of POST /v1/beacon, built from the wire contract the browser library writes. */
const flags = Object.fromEntries(BEACON_FLAGS.map((f) => [f, Type.Boolean()])) as Record<
  BeaconFlag,
  ReturnType<typeof Type.Boolean>
>

export const BeaconRequest = Strict({
  key: Type.Optional(
    Type.String({ maxLength: 200, description: 'publishable key, when not sent in the x-api-key header' }),
  ),
  device_id: Type.String({
    pattern: DEVICE_ID_PATTERN.source,
    description: 'SHA-256 of the fingerprint components, lower-case hex',
  }),
  watch_of: Type.Optional(
    Type.String({
      pattern: VISIT_ID_PATTERN.source,
      description: "watch mode: the visit_id of the watch's first beacon, which ties this one to its session",
    }),
  ),
  device: Strict({
    ...flags,
    antidetect_score: Type.Integer({ minimum: 0, maximum: 100 }),
    antidetect_confidence: StrEnum(['low', 'medium', 'high'] as const),
  }),
})

export const BeaconResponse = Type.Object({
  device_id: Type.String(),
  visit_id: Type.String({ description: 'random id of this page visit' }),
})
