import type { Check, EngineInput, Verdict } from '../types.js'
import { type CompiledRule, customReason, type RuleVariables } from './types.js'
import { ruleVariables } from './variables.js'

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

/** The value of a dotted variable path (`event.attributes.amount`), or null when it is absent. */
function valueAt(vars: RuleVariables, path: string): Check['evidence'][string] {
  let v: unknown = vars
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) return null
    v = (v as Record<string, unknown>)[part]
  }
  if (Array.isArray(v)) return v.map(String)
  // Whole numbers are CEL ints (bigint) in the variables; evidence is JSON.
  if (typeof v === 'bigint') return Number(v)
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return null
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
  const vars = ruleVariables(input, builtIn)
  const subject = input.facts?.subject ?? null
  for (const rule of rules) {
    const { spec } = rule
    if (spec.mode === 'off' || !inRollout(spec.id, subject, spec.rollout)) continue
    if (!rule.test(vars)) continue
    if (spec.mode === 'shadow') {
      out.shadow.push(spec.id)
      continue
    }
    const evidence: Check['evidence'] = {}
    for (const path of rule.reads) evidence[path] = valueAt(vars, path)
    const action = spec.then
    const weight = 'score' in action ? action.score : 0
    if ('verdict' in action) out.verdict = strictest(out.verdict, action.verdict)
    out.checks.push({
      check: 'custom',
      key: spec.id,
      weight,
      reason: customReason(spec.id),
      message: spec.description?.trim() || `Custom rule ${spec.id} matched`,
      evidence,
    })
  }
  return out
}
