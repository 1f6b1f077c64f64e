import type { Work } from '../../store/engine/db.js'
import type { NewMessage, WebhookOutbox } from '../../store/webhooks/outbox.js'
import { uuidv7 } from '../../util/uuid.js'

/**
 * The event types an endpoint can subscribe to (docs/webhooks.md shows each payload). Payloads carry
 * ids, codes and keyed hashes only, never a raw email, phone or IP address.
 */
export const WEBHOOK_EVENT_TYPES = [
  'decision.review',
  'decision.block',
  'review.resolved',
  'label.created',
  'label.withdrawn',
  'list.entry_added',
  'list.entry_removed',
  'list.entry_expired',
  'config.version_created',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** Whose data a message concerns, so that erasure finds it. */
export type MessageSubject = NewMessage['subject']

/**
 * Writes one message into the outbox, inside the caller's transaction: it commits with the change that
 * causes it or not at all. Nothing is written when no enabled endpoint of the tenant subscribes.
 */
export function* emit(
  outbox: WebhookOutbox,
  tenantId: string,
  nowMs: number,
  type: WebhookEventType,
  data: Record<string, unknown>,
  subject: MessageSubject = {},
): Work<number> {
  const id = `msg_${uuidv7(nowMs).replaceAll('-', '')}`
  const payload = JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data })
  return yield* outbox.enqueue({ id, tenantId, type, payload, createdMs: nowMs, subject })
}

/** Whoever made a change: a console user (by id) or an API key (by id); never an email. */
export type Actor = { type: 'console_user'; id: string } | { type: 'api_key'; id: string }
