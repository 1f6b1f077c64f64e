import { DAY_MS } from '../../store/events/aggregates.js'
import type { Store } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { type RuleCounts, ruleFigures } from '../../util/rule-stats.js'

/**
 * Per-rule performance over the last `windowDays` days (docs/outcomes.md): for every reason code that
 * fired, its labelled outcomes, precision with a 95 % Wilson interval, recall over the window's
 * labelled fraud and a suggested weight. An event's latest label is its outcome.
 */
export async function rulesPerformance(
  parts: { store: Store; clock: Clock },
  tenantId: string,
  windowDays: number,
) {
  const until = parts.clock.now()
  const since = until - windowDays * DAY_MS
  const [fired, labelled] = await Promise.all([
    parts.store.rulePerformance.fired(tenantId, since, until),
    parts.store.rulePerformance.labelled(tenantId, since, until),
  ])
  const counts = new Map<string, RuleCounts>()
  const row = (reason: string) => {
    let c = counts.get(reason)
    if (!c) {
      c = { reason, fired: fired.get(reason) ?? 0, fraud: 0, legit: 0 }
      counts.set(reason, c)
    }
    return c
  }
  for (const reason of fired.keys()) row(reason)
  let fraudTotal = 0
  for (const e of labelled) {
    if (e.outcome === 'fraud') fraudTotal++
    for (const reason of e.reasons) row(reason)[e.outcome]++
  }
  const rules = [...counts.values()]
    .map((c) => ruleFigures(c, fraudTotal))
    .sort((a, b) => b.fired - a.fired || (a.reason < b.reason ? -1 : 1))
  return { rules, window_days: windowDays, labelled_events: labelled.length }
}
