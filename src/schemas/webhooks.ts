import { Type } from '@fastify/type-provider-typebox'
import { WEBHOOK_EVENT_TYPES } from '../services/webhooks/events.js'
import { Digits, Nullable, StrEnum, Strict } from './common.js'

const Url = Type.String({
  minLength: 8,
  maxLength: 2048,
  description: 'https URL the events are POSTed to (http only with VERDICT_WEBHOOK_ALLOW_HTTP=1)',
})
const Events = Type.Array(StrEnum(WEBHOOK_EVENT_TYPES), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  description: 'event types sent to this endpoint',
})
const Description = Type.String({ maxLength: 256 })

export const WebhookBody = Strict({ url: Url, events: Events, description: Type.Optional(Description) })

export const WebhookPatch = Strict({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean({ description: 'false stops deliveries; true resumes them' })),
})

export const RotateBody = Strict({
  overlap_seconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 7 * 86400,
      description: 'how long the old secret keeps signing beside the new one (default 86400)',
    }),
  ),
})

const EndpointFields = {
  id: Type.String(),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'why the endpoint is disabled' })),
  failing_since_ms: Nullable(Type.Integer({ description: 'since when every attempt failed' })),
  previous_secret_until_ms: Nullable(
    Type.Integer({ description: 'until when the secret before the last rotation still signs' }),
  ),
  created_ms: Type.Integer(),
  updated_ms: Type.Integer(),
}

export const WebhookView = Type.Object(EndpointFields)
export const WebhookWithSecret = Type.Object({
  ...EndpointFields,
  secret: Type.String({ description: 'the signing secret (whsec_…); shown only now' }),
})
export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) })
export const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() })

export const WebhookParams = Strict({ webhookId: Type.String({ pattern: '^ep_[0-9a-f]{24}$' }) })
export const DeliveryParams = Strict({
  webhookId: Type.String({ pattern: '^ep_[0-9a-f]{24}$' }),
  messageId: Type.String({ pattern: '^msg_[0-9a-f]{32}$' }),
})

export const DeliveriesQuery = Strict({
  limit: Type.Optional(Digits('page size, at most 200 (default 50)')),
  offset: Type.Optional(Digits('deliveries to skip')),
  status: Type.Optional(StrEnum(['pending', 'delivered', 'failed'] as const)),
})

const Delivery = Type.Object({
  message_id: Type.String({ description: 'the webhook-id header of every attempt' }),
  event_type: Type.String(),
  status: Type.String({ description: 'pending (first attempt or retrying), delivered or failed' }),
  attempts: Type.Integer(),
  next_attempt_ms: Nullable(Type.Integer()),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  last_attempt_ms: Nullable(Type.Integer()),
  delivered_ms: Nullable(Type.Integer()),
  created_ms: Type.Integer(),
  payload: Type.Object({}, { additionalProperties: true, description: 'the body sent' }),
})

export const DeliveryPage = Type.Object({
  deliveries: Type.Array(Delivery),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
})

export const Redelivered = Type.Object({ message_id: Type.String(), status: Type.String() })
