import type { Check, EngineInput, Verdict } from '../types.js'
import { emptyMemo, evidenceValue, guardsPass, rulePlan } from './plan.js'
import type { CompiledRule } from './types.js'

/** FNV-1a, 32 bits: a stable, dependency-free hash for rollout buckets (not a secret). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

/**
 * Whether a subject is inside a rule's rollout: the same subject stays in (or out) for every event
 * and every later rollout of at least this share. A subject-less event is in only at 100 %.
 */
export function inRollout(ruleId: string, subject: string | null, rollout: number): boolean {
  if (rollout >= 100) return true
  if (rollout <= 0 || subject === null) return false
  return fnv1a(`${ruleId}\u0000${subject}`) % 100 < rollout
}

export interface RuleOutcome {
  /** Enforced firings that carry a score contribution or a verdict, as checks (weight 0 for verdicts). */
  checks: Check[]
  /** The strictest verdict an enforced rule set, if any. */
  verdict: Verdict | null
  /** Ids of shadow rules whose condition held: recorded on the event, never in the decision. */
  shadow: string[]
}

const SEVERITY: Record<Verdict, number> = { allow: 0, review: 1, block: 2 }

function strictest(a: Verdict | null, b: Verdict): Verdict {
  if (a === null) return b
  // A review or block floor wins over an allow; among floors the higher one wins.
  return SEVERITY[b] > SEVERITY[a] ? b : a
}

/** Runs the tenant's rules over an event after the built-in checks (docs/rules.md, "Actions"). */
export function applyRules(
  input: EngineInput,
  rules: readonly CompiledRule[],
  builtIn: { reasons: string[]; score: number },
): RuleOutcome {
  const out: RuleOutcome = { checks: [], verdict: null, shadow: [] }
  if (rules.length === 0) return out
  const plan = rulePlan(rules)
  const name = input.facts?.event.name ?? ''
  const bucket = plan.byName.get(name) ?? plan.other
  if (bucket.rules.length === 0) return out
  const vars: Record<string, unknown> = {}
  const memo = emptyMemo(bucket)
  const subject = input.facts?.subject ?? null
  // A condition that fails (a missing attribute) throws inside the evaluator and counts as not
  // holding; nothing reads the stack of those errors, so none is captured.
  const stackLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    for (const entry of bucket.rules) {
      const r = entry.rule
      if (!inRollout(r.id, subject, r.rollout)) continue
      if (!guardsPass(entry, memo, input, builtIn)) continue
      entry.complete(vars, input, builtIn, memo)
      if (!r.rule.test(vars)) continue
      if (r.mode === 'shadow') {
        out.shadow.push(r.id)
        continue
      }
      const evidence: Check['evidence'] = {}
      for (const [path, parts] of r.evidence) evidence[path] = evidenceValue(vars, parts)
      if (r.verdict !== null) out.verdict = strictest(out.verdict, r.verdict)
      out.checks.push({
        check: 'custom',
        key: r.id,
        weight: r.weight,
        reason: r.reason,
        message: r.message,
        evidence,
      })
    }
  } finally {
    Error.stackTraceLimit = stackLimit
  }
  return out
}
