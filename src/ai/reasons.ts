import { isReasonCode, REASON, REASONS } from '../scoring/reasons.js'

// The descriptions are the registry's (src/scoring/reasons.ts): fixed phrases written by us, the only
// prose about a check that reaches the model. Check messages are never sent: they interpolate
// caller-derived strings.

const GENERIC = 'another risk rule of this service fired'

/** Our codes are lower snake case; anything else is not ours and is never echoed into a prompt. */
const CODE_SHAPE = /^[a-z][a-z0-9_]{1,47}$/

export const KNOWN_REASON_CODES: readonly string[] = REASONS.map((r) => r.code)

/** The code as it may appear in a prompt: itself when it has our shape, else a neutral placeholder. */
export function safeReasonCode(reason: string): string {
  return CODE_SHAPE.test(reason) ? reason : 'other_signal'
}

export function describeReason(reason: string): string {
  return isReasonCode(reason) ? REASON[reason].description : GENERIC
}
