import { CUSTOM_PREFIX, customReason, isCustomReason } from '../../scoring/rules/types.js'
import { DAY_MS } from '../../store/events/aggregates.js'
import type { Store } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { type RuleCounts, ruleFigures } from '../../util/rule-stats.js'

/** A row's key: a reason code, or a shadow rule's id (its hits are not reasons). */
const shadowKey = (id: string) => `shadow\u0000${id}`

/**
 * Per-rule performance over the last `windowDays` days (docs/outcomes.md): for every reason code that
 * fired, its labelled outcomes, precision with a 95 % Wilson interval, recall over the window's
 * labelled fraud and a suggested weight. An event's latest label is its outcome. The tenant's own
 * rules are rows too (docs/rules.md): enforced hits under their reason `rule:<id>`, shadow hits in a
 * row of their own marked `shadow`, and each rule of the current config at least once, so a rule that
 * never held shows its zero.
 */
export async function rulesPerformance(
  parts: { store: Store; clock: Clock },
  tenantId: string,
  windowDays: number,
) {
  const until = parts.clock.now()
  const since = until - windowDays * DAY_MS
  const [fired, shadowFired, labelled, config] = await Promise.all([
    parts.store.rulePerformance.fired(tenantId, since, until),
    parts.store.rulePerformance.shadowFired(tenantId, since, until),
    parts.store.rulePerformance.labelled(tenantId, since, until),
    parts.store.config.cached(tenantId),
  ])
  const counts = new Map<string, RuleCounts & { shadowOf?: string }>()
  const row = (key: string) => {
    let c = counts.get(key)
    if (!c) {
      const shadowOf = key.startsWith('shadow\u0000') ? key.slice(7) : undefined
      c = shadowOf
        ? {
            reason: customReason(shadowOf),
            fired: shadowFired.get(shadowOf) ?? 0,
            fraud: 0,
            legit: 0,
            shadowOf,
          }
        : { reason: key, fired: fired.get(key) ?? 0, fraud: 0, legit: 0 }
      counts.set(key, c)
    }
    return c
  }
  for (const reason of fired.keys()) row(reason)
  for (const id of shadowFired.keys()) row(shadowKey(id))
  for (const r of config.overrides.rules ?? []) {
    if (r.mode === 'enforce') row(customReason(r.id))
    else if (r.mode === 'shadow') row(shadowKey(r.id))
  }
  let fraudTotal = 0
  for (const e of labelled) {
    if (e.outcome === 'fraud') fraudTotal++
    for (const reason of e.reasons) row(reason)[e.outcome]++
    for (const id of e.shadow) row(shadowKey(id))[e.outcome]++
  }
  const rules = [...counts.values()]
    .map((c) => {
      const figures = ruleFigures(c, fraudTotal)
      if (c.shadowOf !== undefined) return { ...figures, rule_id: c.shadowOf, shadow: true }
      if (isCustomReason(c.reason))
        return { ...figures, rule_id: c.reason.slice(CUSTOM_PREFIX.length), shadow: false }
      return figures
    })
    .sort(
      (a, b) =>
        b.fired - a.fired ||
        (a.reason < b.reason
          ? -1
          : a.reason > b.reason
            ? 1
            : Number('shadow' in a && a.shadow) - Number('shadow' in b && b.shadow)),
    )
  return { rules, window_days: windowDays, labelled_events: labelled.length }
}
