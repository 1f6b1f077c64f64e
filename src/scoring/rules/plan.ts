import type { Check, EngineInput, Verdict } from '../types.js'
import { type CompiledRule, type CustomReason, customReason, type Guard, type RuleMode } from './types.js'
import {
  type BuiltIn,
  UNMADE,
  type Variable,
  type VariableCompleter,
  type VariableMemo,
  variableCompleter,
  variableOf,
} from './variables.js'

/** A rule with everything about it that does not change between events, worked out once. */
export interface PlannedRule {
  rule: CompiledRule
  id: string
  mode: Exclude<RuleMode, 'off'>
  rollout: number
  reason: CustomReason
  message: string
  weight: number
  verdict: Verdict | null
  guards: readonly Guard[]
  /** The variables its evidence shows, each with its path split once. */
  evidence: readonly (readonly [path: string, parts: readonly string[]])[]
}

/** A guard with the variable it tests: its index in the bucket's memo and the rest of its path. */
export interface SlotGuard {
  guard: Guard
  slot: number
  make: Variable['make']
  rest: readonly string[]
}

/** A rule as an event of one name meets it: its guards, then its variables (`complete`). */
export interface BucketRule {
  rule: PlannedRule
  guards: readonly SlotGuard[]
  complete: VariableCompleter
}

/**
 * The rules an event of one name can fire, in the tenant's order, and the variables they read (`slots`
 * of them, each with its index in the event's memo). A rule's guards make only the variables they
 * test, when they test them; a rule whose guards pass then gets the rest of its own, so the variables
 * of skipped rules are never made.
 */
export interface RuleBucket {
  rules: readonly BucketRule[]
  slots: number
}

/**
 * A rule set ready for events: the rules that are not off, grouped by the event names they can hold
 * for. A rule whose condition holds only when `event.name` is one of some names (its `eventNames`,
 * found in its syntax tree when it was compiled) is in the buckets of those names only; every other
 * rule is in every bucket. Skipping a rule for another event name never changes what fires: its
 * condition cannot be true there.
 */
export interface RulePlan {
  byName: ReadonlyMap<string, RuleBucket>
  /** The bucket of every event name no rule names. */
  other: RuleBucket
}

function planned(rule: CompiledRule): PlannedRule | null {
  const { spec } = rule
  if (spec.mode === 'off') return null
  const action = spec.then
  return {
    rule,
    id: spec.id,
    mode: spec.mode,
    rollout: spec.rollout,
    reason: customReason(spec.id),
    message: spec.description?.trim() || `Custom rule ${spec.id} matched`,
    weight: 'score' in action ? action.score : 0,
    verdict: 'verdict' in action ? action.verdict : null,
    guards: rule.guards,
    evidence: rule.reads.map((p) => [p, p.split('.')] as const),
  }
}

function bucket(rules: PlannedRule[]): RuleBucket {
  const slots = new Map<string, number>()
  const slot = (key: string) => {
    if (!slots.has(key)) slots.set(key, slots.size)
    return slots.get(key)!
  }
  const entries = rules.map((rule): BucketRule => {
    // A guard on no single variable (a whole group) is left out: skipping fewer rules is always safe.
    const guards = rule.guards.flatMap((guard) => {
      const at = variableOf(guard.path)
      return at ? [{ guard, slot: slot(at.variable.key), make: at.variable.make, rest: at.rest }] : []
    })
    return { rule, guards, complete: variableCompleter(rule.rule.needs, slot) }
  })
  return { rules: entries, slots: slots.size }
}

function makePlan(rules: readonly CompiledRule[]): RulePlan {
  const active = rules.map(planned).filter((r): r is PlannedRule => r !== null)
  const names = new Set(active.flatMap((r) => r.rule.eventNames ?? []))
  const byName = new Map<string, RuleBucket>()
  for (const name of names)
    byName.set(name, bucket(active.filter((r) => r.rule.eventNames?.includes(name) ?? true)))
  return { byName, other: bucket(active.filter((r) => r.rule.eventNames === null)) }
}

/** Plans by compiled rule set: a config version's rules are compiled once and planned once. */
const plans = new WeakMap<readonly CompiledRule[], RulePlan>()

export function rulePlan(rules: readonly CompiledRule[]): RulePlan {
  let plan = plans.get(rules)
  if (!plan) {
    plan = makePlan(rules)
    plans.set(rules, plan)
  }
  return plan
}

/** The value at a path inside a variable's value, or undefined when a step is missing. */
function valueIn(value: unknown, path: readonly string[], upTo = path.length): unknown {
  let v = value
  for (let k = 0; k < upTo; k++) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, path[k]!)) return undefined
    v = (v as Record<string, unknown>)[path[k]!]
  }
  return v
}

const isPlainMap = (v: object) => {
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/**
 * Whether a variable's value passes a guard (types.ts), `rest` being the guard's path inside it. Each
 * test fails only where CEL could not make its conjunct true: a missing value is an error there, a
 * value of another type an error or false, and numbers compare exactly in both (a bigint with a double
 * included). `has()` of a group's field always holds: every field a rule names is made.
 */
export function guardHolds(value: unknown, rest: readonly string[], g: Guard): boolean {
  if (g.test === 'has') {
    if (rest.length === 0) return true
    const parent = valueIn(value, rest, rest.length - 1)
    return parent !== null && typeof parent === 'object' && Object.hasOwn(parent, rest[rest.length - 1]!)
  }
  const v = valueIn(value, rest)
  switch (g.test) {
    case 'true':
      return v === true
    case 'false':
      return v === false
    case 'contains':
      if (Array.isArray(v)) return v.includes(g.value)
      if (v === null || typeof v !== 'object') return false
      // A map holds its keys; any other object is left to the evaluator.
      return isPlainMap(v) ? Object.hasOwn(v, g.value) : true
    case 'oneOf':
      return typeof v === 'string' && g.values.includes(v)
  }
  if (typeof v !== 'number' && typeof v !== 'bigint') return false
  switch (g.test) {
    case '<':
      return v < g.value
    case '<=':
      return v <= g.value
    case '>':
      return v > g.value
    case '>=':
      return v >= g.value
    case '==':
      // A bigint and a number are equal when neither is less (=== says no across the two types).
      return v <= g.value && v >= g.value
  }
}

/** Whether a rule's guards all pass for an event, making (once, in `memo`) the variables they test. */
export function guardsPass(r: BucketRule, memo: VariableMemo, input: EngineInput, builtIn: BuiltIn): boolean {
  for (const { guard, slot, make, rest } of r.guards) {
    let value = memo[slot]
    if (value === UNMADE) value = memo[slot] = make(input, builtIn)
    if (!guardHolds(value, rest, guard)) return false
  }
  return true
}

/** A fresh memo for an event in a bucket: nothing made yet. */
export const emptyMemo = (bucket: RuleBucket): VariableMemo => new Array(bucket.slots).fill(UNMADE)

/** The value of a variable path (`event.attributes.amount`), as evidence: JSON, null when absent. */
export function evidenceValue(
  vars: Record<string, unknown>,
  parts: readonly string[],
): Check['evidence'][string] {
  let v: unknown = vars
  for (const part of parts) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) return null
    v = (v as Record<string, unknown>)[part]
  }
  if (Array.isArray(v)) return v.map(String)
  // Whole numbers are CEL ints (bigint) in the variables; evidence is JSON.
  if (typeof v === 'bigint') return Number(v)
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return null
}
