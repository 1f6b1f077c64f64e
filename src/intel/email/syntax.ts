import { domainToASCII } from 'node:url'

/** Why an address cannot be used. Stable strings: they surface as `reject_reason` in the API. */
export type RejectReason =
  | 'empty'
  | 'missing_at'
  | 'too_long'
  | 'local_empty'
  | 'local_too_long'
  | 'bad_characters'
  | 'domain_invalid'

export type ParsedEmail =
  | {
      ok: true
      /** Local part exactly as written (case kept; providers decide case rules, the canonicaliser folds it). */
      local: string
      /** Domain in lower-case ASCII (IDN labels as punycode), without a trailing dot. */
      domain: string
      /** `local@domain` with the normalised domain. */
      address: string
    }
  | { ok: false; reason: RejectReason; local: string | null; domain: string | null }

/** RFC 5321 limits, in octets. */
export const MAX_ADDRESS_LENGTH = 254
export const MAX_LOCAL_LENGTH = 64
const MAX_DOMAIN_LENGTH = 253
const MAX_LABEL_LENGTH = 63

// Dot-atom text of RFC 5322, plus any non-ASCII character for internationalised mailboxes (RFC 6531).
// Quoted local parts are refused: no consumer provider issues them and they mostly appear in abuse.
const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\uFFFF]+$/
const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f\u0085\u00a0\u2000-\u200f\u2028\u2029\ufeff]/
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
// A TLD is letters only, or an IDN A-label.
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/

function octets(s: string): number {
  return Buffer.byteLength(s, 'utf8')
}

function fail(reason: RejectReason, local: string | null = null, domain: string | null = null): ParsedEmail {
  return { ok: false, reason, local, domain }
}

/**
 * Normalises a domain to lower-case ASCII, or returns null when it is not a usable mail domain
 * (needs two or more LDH labels and a non-numeric TLD; IP literals are refused).
 */
export function normalizeDomain(raw: string): string | null {
  let d = raw.trim().toLowerCase()
  if (d.endsWith('.')) d = d.slice(0, -1)
  if (!d || d.startsWith('[') || CONTROL_OR_SPACE.test(d)) return null
  // domainToASCII applies IDNA mapping; it returns '' for names it cannot encode.
  const ascii = domainToASCII(d)
  if (!ascii || ascii.length > MAX_DOMAIN_LENGTH) return null
  const labels = ascii.split('.')
  if (labels.length < 2) return null
  for (const label of labels) {
    if (label.length === 0 || label.length > MAX_LABEL_LENGTH || !LDH_LABEL.test(label)) return null
  }
  if (!TLD.test(labels[labels.length - 1]!)) return null
  return ascii
}

/** Splits an address into local part and domain, or says why it is unusable. */
export function parseEmail(input: string): ParsedEmail {
  const raw = input.trim()
  if (!raw) return fail('empty')
  const at = raw.lastIndexOf('@')
  if (at < 0) return fail('missing_at')
  const local = raw.slice(0, at)
  const rawDomain = raw.slice(at + 1)
  if (!local) return fail('local_empty', null, rawDomain)
  const domain = normalizeDomain(rawDomain)
  if (octets(local) > MAX_LOCAL_LENGTH) return fail('local_too_long', local, domain)
  if (octets(local) + 1 + (domain ?? rawDomain).length > MAX_ADDRESS_LENGTH)
    return fail('too_long', local, domain)
  if (
    CONTROL_OR_SPACE.test(local) ||
    local.startsWith('.') ||
    local.endsWith('.') ||
    local.includes('..') ||
    !local.split('.').every((atom) => ATOM.test(atom))
  ) {
    return fail('bad_characters', local, domain)
  }
  if (!domain) return fail('domain_invalid', local, null)
  return { ok: true, local, domain, address: `${local}@${domain}` }
}
