import type { Reputation } from '../network-signals.js'
import { capitalise, clampScore, IDENTIFIER_WEIGHTS, listPhrase } from './weights.js'

/** What the scorer reads of an address's analysis (the email intelligence's result has this shape). */
export interface EmailFacts {
  malformed: boolean
  rejectReason: string | null
  domain: string | null
  canonical: string | null
  isAliased: boolean
  aliasTricks: string[]
  hasPlusTag: boolean
  isDisposable: boolean
  isFreeProvider: boolean
  looksGibberish: boolean
}

/** What the scorer reads of a catch-all probe. */
export interface CatchAllFacts {
  catchAll: boolean
  probed: boolean
}

export interface EmailResult {
  fraud_score: number
  is_disposable: boolean
  /** False only when DNS answered definitely that the domain takes no mail. */
  mx_valid: boolean
  mx_status: 'valid' | 'none' | 'unknown' | 'not_checked'
  catch_all: boolean
  catch_all_probed: boolean
  looks_gibberish: boolean
  has_plus_tag: boolean
  canonical: string | null
  is_aliased: boolean
  alias_tricks: string[]
  is_malformed: boolean
  reject_reason: string | null
  recent_abuse: boolean
  is_free_provider: boolean
  domain: string | null
}

export function emailResult(
  a: EmailFacts,
  mxStatus: EmailResult['mx_status'],
  catchAll: CatchAllFacts | null,
  rep: Reputation,
): { result: EmailResult; summary: string; warnings: string[] } {
  const w = IDENTIFIER_WEIGHTS.email
  const catchAllHit = catchAll?.catchAll === true
  let score = 0
  const bad: string[] = []
  if (a.malformed) {
    score += w.malformed
    bad.push(`unusable address (${a.rejectReason ?? 'malformed'})`)
  }
  if (a.isDisposable) {
    score += w.disposable
    bad.push('disposable mail domain')
  }
  if (mxStatus === 'none') {
    score += w.noMx
    bad.push('the domain has no mail server')
  }
  if (a.looksGibberish) {
    score += w.gibberish
    bad.push('machine-generated-looking mailbox name')
  }
  if (rep.recent_abuse) {
    score += w.recentAbuse
    bad.push('recently flagged in the operator network')
  }
  // Dots in a Gmail address are how people write their name, not a trick: only other re-spellings score.
  const tricks = a.aliasTricks.filter((t) => t !== 'dot_trick')
  if (a.isAliased && tricks.length > 0) {
    score += w.aliased
    bad.push(`alias of another mailbox (${tricks.join(', ')})`)
  }
  if (catchAllHit) {
    score += w.catchAll
    bad.push('the server accepts mail for any address')
  }
  const warnings: string[] = []
  if (mxStatus === 'unknown')
    warnings.push('email_mx_unknown: DNS did not answer in time; the mail server was not verified')
  else if (mxStatus === 'not_checked' && !a.malformed)
    warnings.push(
      'email_mx_not_checked: the domain is not under a public suffix, so its mail server was not looked up',
    )
  const result: EmailResult = {
    fraud_score: clampScore(score),
    is_disposable: a.isDisposable,
    mx_valid: mxStatus !== 'none' && !a.malformed,
    mx_status: mxStatus,
    catch_all: catchAllHit,
    catch_all_probed: catchAll?.probed ?? false,
    looks_gibberish: a.looksGibberish,
    has_plus_tag: a.hasPlusTag,
    canonical: a.canonical,
    is_aliased: a.isAliased,
    alias_tricks: a.aliasTricks,
    is_malformed: a.malformed,
    reject_reason: a.rejectReason,
    recent_abuse: rep.recent_abuse,
    is_free_provider: a.isFreeProvider,
    domain: a.domain,
  }
  const kind = a.isFreeProvider ? 'free webmail address' : 'address'
  const summary = bad.length
    ? `${capitalise(listPhrase(bad))}; fraud score ${result.fraud_score}.`
    : `Deliverable-looking ${kind}${a.domain ? ` at ${a.domain}` : ''}; no risk signals.`
  return { result, summary, warnings }
}
