import type { Reputation } from '../network-signals.js'
import { capitalise, clampScore, IDENTIFIER_WEIGHTS, listPhrase } from './weights.js'

/** What the scorer reads of a number's analysis (the phone intelligence's result has this shape). */
export interface PhoneFacts {
  valid: boolean
  e164: string | null
  lineType: string | null
  country: string | null
  isVoip: boolean
  isDisposable: boolean
  carrier: string | null
  rejectReason: string | null
}

export interface PhoneResult {
  fraud_score: number
  valid: boolean
  is_voip: boolean
  is_disposable: boolean
  line_type: string | null
  country: string | null
  carrier: string | null
  recent_abuse: boolean
  e164: string | null
  reject_reason: string | null
}

/** Line types no person uses as a personal contact number. */
const NON_PERSONAL = new Set(['toll_free', 'premium_rate', 'shared_cost', 'uan', 'pager', 'voicemail'])

export function phoneResult(
  p: PhoneFacts,
  rep: Reputation,
  disposableKnown: boolean,
): { result: PhoneResult; summary: string; warnings: string[] } {
  const w = IDENTIFIER_WEIGHTS.phone
  let score = 0
  const bad: string[] = []
  if (!p.valid) {
    score += w.invalid
    bad.push(`not a dialable number (${p.rejectReason ?? 'invalid'})`)
  }
  if (p.isDisposable) {
    score += w.disposable
    bad.push('listed on public receive-SMS sites')
  }
  if (p.isVoip) {
    score += w.voip
    bad.push('VoIP range')
  }
  if (p.lineType && NON_PERSONAL.has(p.lineType)) {
    score += w.nonPersonal
    bad.push(`${p.lineType.replace('_', ' ')} line`)
  }
  if (rep.recent_abuse) {
    score += w.recentAbuse
    bad.push('recently flagged in the operator network')
  }
  const result: PhoneResult = {
    fraud_score: clampScore(score),
    valid: p.valid,
    is_voip: p.isVoip,
    is_disposable: p.isDisposable,
    line_type: p.lineType,
    country: p.country,
    carrier: p.carrier,
    recent_abuse: rep.recent_abuse,
    e164: p.e164,
    reject_reason: p.rejectReason,
  }
  const warnings = disposableKnown ? [] : ['phone_disposable_unknown: no disposable-number list is loaded']
  const desc = [
    p.lineType ? p.lineType.replace(/_/g, ' ') : null,
    p.country ? `number from ${p.country}` : 'number',
  ]
    .filter(Boolean)
    .join(' ')
  const summary = bad.length
    ? `${capitalise(listPhrase(bad))}; fraud score ${result.fraud_score}.`
    : `Valid ${desc}${p.carrier ? ` (range holder ${p.carrier})` : ''}; no risk signals.`
  return { result, summary, warnings }
}
