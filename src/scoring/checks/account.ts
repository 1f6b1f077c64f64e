import type { Check, CheckFamily } from '../types.js'
import { fire } from './fire.js'

/** An account is established once it has this many earlier events, the first at least a day old. */
export const ESTABLISHED_EVENTS = 2
export const ESTABLISHED_AGE_MS = 86_400_000

/**
 * Account-level signals (docs/scoring.md): several accounts on one canonical mailbox (aliases of one
 * inbox, the promo-abuse pattern), and an established account used from a device and a country it has
 * never used (takeover). Either novelty alone is ordinary (a new phone, a trip), so only both fire.
 */
export const accountRisk: CheckFamily = (input) => {
  const out: Check[] = []
  const w = input.config.weights
  const n = input.history.mailboxAccounts ?? null
  if (n !== null && n >= 2) {
    const high = n >= input.config.thresholds.mailboxReuseHigh
    out.push(
      fire('mailbox_reuse', {
        key: high ? 'mailboxReuseHigh' : 'mailboxReuseMed',
        weight: high ? w.mailboxReuseHigh : w.mailboxReuseMed,
        message: `${n} different accounts use this mailbox (aliases of one address count as one mailbox).`,
        evidence: { accounts: n, tier: high ? 'high' : 'medium' },
      }),
    )
  }
  const a = input.history.account ?? null
  if (
    a !== null &&
    a.events >= ESTABLISHED_EVENTS &&
    a.nowMs - a.firstMs >= ESTABLISHED_AGE_MS &&
    a.deviceSeen === false &&
    a.countrySeen === false
  ) {
    out.push(
      fire('account_takeover', {
        key: 'accountTakeover',
        weight: w.accountTakeover,
        message: 'An established account is used from a device and a country it has never used before.',
        evidence: {
          earlier_events: a.events,
          account_age_days: Math.floor((a.nowMs - a.firstMs) / 86_400_000),
        },
      }),
    )
  }
  return out
}
