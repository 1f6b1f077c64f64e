import type { Check, CheckFamily, EngineInput } from '../types.js'
import { fire } from './fire.js'

/** An account is established once it has this many earlier events, the first at least a day old. */
export const ESTABLISHED_EVENTS = 2
export const ESTABLISHED_AGE_MS = 86_400_000

/** `gibberish_wave` compares the last WAVE_HOURS clock hours with the same hours of WAVE_DAYS days before. */
export const WAVE_HOURS = 6
export const WAVE_DAYS = 7
/** A wave is at least this many times what the tenant's quietest day would give... */
export const WAVE_OVER_QUIET = 3
/** ...and a count that level would reach by chance less often than this (Poisson). */
export const WAVE_CHANCE = 1e-4

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
  const wave = generatedMailboxWave(input)
  if (wave) out.push(wave)
  return out
}

/**
 * A sign-up with a machine-generated mailbox while such mailboxes arrive in a wave: at least the
 * threshold in the last WAVE_HOURS hours, this one included, and far above what the tenant's own traffic
 * gives: the expected count is the recent events times the share of them that fired `gibberish_email`
 * on the quietest of the WAVE_DAYS days before at the same clock hours (days without any event do not
 * count; with none, it is 0), and a wave is WAVE_OVER_QUIET times that and a count it would reach by
 * chance (Poisson) less than WAVE_CHANCE of the time. A share, so that a busier day or a growing tenant
 * is not a wave; the quietest day, not the average, so that earlier campaigns do not raise the bar for
 * the next one; the same clock hours, so that afternoons are compared with afternoons. One
 * generated-looking name is often a real one (`gibberish_email` alone stays below review); many at
 * once, above the tenant's steady rate of such names, is a campaign.
 */
function generatedMailboxWave(input: EngineInput): Check | null {
  const g = input.history.generatedMailboxes ?? null
  if (g === null || input.email?.looksGibberish !== true) return null
  const threshold = input.config.thresholds.gibberishWave
  let share: number | null = null
  g.sameHours.forEach((fired, i) => {
    const events = g.sameHoursEvents[i] ?? 0
    if (events > 0 && (share === null || fired / events < share)) share = fired / events
  })
  const expected = (share ?? 0) * g.recentEvents
  if (g.recent < threshold || g.recent < WAVE_OVER_QUIET * expected) return null
  if (poissonTail(expected, g.recent) >= WAVE_CHANCE) return null
  return fire('gibberish_wave', {
    key: 'gibberishWave',
    weight: input.config.weights.gibberishWave,
    message: `${g.recent} events with machine-generated mailboxes in the last ${WAVE_HOURS} hours, far above this tenant's usual share of them.`,
    evidence: {
      recent: g.recent,
      expected: Math.round(expected * 10) / 10,
      window_hours: WAVE_HOURS,
      threshold,
    },
  })
}

/** P(X >= k) for X ~ Poisson(mean), for k above the mean; summed from term k in log space (no underflow). */
export function poissonTail(mean: number, k: number): number {
  if (mean <= 0) return k > 0 ? 0 : 1
  if (k <= mean) return 1
  let logFactorial = 0
  for (let i = 2; i <= k; i++) logFactorial += Math.log(i)
  let term = Math.exp(-mean + k * Math.log(mean) - logFactorial)
  let sum = 0
  for (let i = k; term > sum * 1e-15 && i < k + 100_000; i++) {
    sum += term
    term *= mean / (i + 1)
  }
  return Math.min(1, sum)
}
