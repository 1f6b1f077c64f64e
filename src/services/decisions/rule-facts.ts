import { hash as hashOnce } from 'node:crypto'
import type { AttributeValue, RuleFacts } from '../../scoring/rules/facts.js'
import type { AttributeSpecs } from '../../scoring/rules/types.js'
import type { DeviceResolution } from '../devices/device.js'
import type { EmailInput, PhoneInput } from './score-identifiers.js'

interface EventFields {
  event: string
  attributes?: Record<string, AttributeValue>
  source?: string
  site?: string
  campaign?: string
  affiliate?: string
}

const text = (s: string | undefined) => (s === undefined || s.trim() === '' ? null : s.trim())

/** A short stable hash: which rollout bucket a subject falls in, without recording the id itself. */
const subjectKey = (s: string) => hashOnce('sha256', s, 'base64url').slice(0, 16)

/** One counted attribute value of an event: its key and the keyed hash counts are kept under. */
export interface CountedValue {
  key: string
  valueHash: string
}

/**
 * The event's attributes as they may be recorded, and its counted values (docs/rules.md): a hashed
 * attribute's value (each string of a list) is replaced by its keyed hash before anything else sees it;
 * a counted attribute is counted under its value's hash, a list under each of its distinct strings'.
 */
export function tenantAttributes(
  raw: Record<string, AttributeValue> | undefined,
  specs: AttributeSpecs | undefined,
  hash: (value: string) => string,
): { attributes: Record<string, AttributeValue>; counted: CountedValue[] } {
  const attributes = raw ?? {}
  if (!specs) return { attributes, counted: [] }
  const out: Record<string, AttributeValue> = {}
  const counted: CountedValue[] = []
  for (const [k, v] of Object.entries(attributes)) {
    const spec = specs[k]
    out[k] = spec?.hashed ? (Array.isArray(v) ? v.map(hash) : hash(String(v))) : v
    if (!spec?.counted) continue
    for (const one of new Set(Array.isArray(v) ? v : [String(v)]))
      counted.push({ key: k, valueHash: hash(one) })
  }
  return { attributes: out, counted }
}

/** What the tenant's rules read of an event beyond the engine's signals (scoring/rules/facts.ts). */
export function ruleFacts(
  body: EventFields,
  userId: string | null,
  email: EmailInput | null,
  phone: PhoneInput | null,
  device: DeviceResolution,
): RuleFacts {
  const a = email?.analysis
  const subject = userId !== null ? `u:${userId}` : device.observed ? `d:${device.resolvedId}` : null
  return {
    event: {
      name: body.event,
      attributes: body.attributes ?? {},
      source: text(body.source),
      site: text(body.site),
      campaign: text(body.campaign),
      affiliate: text(body.affiliate),
    },
    email:
      a && !a.malformed
        ? { free: a.isFreeProvider, aliased: a.isAliased, alias_tricks: [...a.aliasTricks] }
        : null,
    phone: phone
      ? {
          country: phone.country,
          line_type: phone.lineType,
          voip: phone.isVoip,
          disposable: phone.isDisposable,
        }
      : null,
    subject: subject === null ? null : subjectKey(subject),
  }
}
