import { jsonText } from './compact-json.js'
import type { EventAttributes } from './scored-event.js'

/** What is stored of a scored event: hashes and coarse attributes, never a raw email, IP or phone. */
export interface EventRecord extends Omit<EventAttributes, 'device' | 'ipBlockHash'> {
  id: string
  createdMs: number
  /** The resolved device identity (token identity or fingerprint-derived), when the event carried a device. */
  resolvedDeviceId: string | null
  score: number
  verdict: string
  reasons: string[]
  /** Fired checks as JSON (codes, weights, messages, evidence numbers). */
  checks: string
}

export interface EventRow {
  id: string
  tenant_id: string
  created_ms: number
  event: string
  user_id: string | null
  device_id: string | null
  resolved_device_id: string | null
  email_hash: string | null
  email_domain: string | null
  ip_hash: string | null
  ip_prefix: string | null
  asn: number | null
  ip_country: string | null
  phone_hash: string | null
  phone_country: string | null
  score: number
  verdict: string
  reasons: string
  checks: string
}

export const EVENT_COLUMNS =
  'id, tenant_id, created_ms, event, user_id, device_id, resolved_device_id, email_hash, email_domain, ip_hash, ip_prefix, asn, ip_country, phone_hash, phone_country, score, verdict, reasons, checks'

export const toEventRecord = (r: EventRow): EventRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  createdMs: Number(r.created_ms),
  event: r.event,
  userId: r.user_id,
  deviceId: r.device_id,
  resolvedDeviceId: r.resolved_device_id,
  emailHash: r.email_hash,
  emailDomain: r.email_domain,
  ipHash: r.ip_hash,
  ipPrefix: r.ip_prefix,
  asn: r.asn === null ? null : Number(r.asn),
  ipCountry: r.ip_country,
  phoneHash: r.phone_hash,
  phoneCountry: r.phone_country,
  score: Number(r.score),
  verdict: r.verdict,
  reasons: JSON.parse(r.reasons) as string[],
  checks: jsonText(r.checks),
})

export interface EventFilter {
  limit: number
  offset: number
  verdict?: string
  event?: string
  /** Substring of a user id or device fingerprint, case-insensitive. */
  q?: string
  /** Only events this reason code fired on. */
  reason?: string
  /** Only events of exactly this user id. */
  userId?: string
  /** Only events created at or after / before these times. */
  sinceMs?: number
  untilMs?: number
  /** Keyset cursor: only events listed after this one (older, or as old with a smaller id). */
  before?: { id: string; createdMs: number }
}
