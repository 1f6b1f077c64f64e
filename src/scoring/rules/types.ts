import type { Verdict } from '../verdict.js'

/** What a tenant rule does when its condition holds. */
export type RuleAction = { score: number } | { verdict: Verdict }

/** `enforce` changes the decision; `shadow` is evaluated and recorded only; `off` is not evaluated. */
export type RuleMode = 'enforce' | 'shadow' | 'off'

/** A tenant-written rule as its config stores it (docs/rules.md). */
export interface RuleSpec {
  id: string
  description?: string
  /** The CEL condition. */
  when: string
  then: RuleAction
  mode: RuleMode
  /** Share of subjects (users, or devices without a user) the rule applies to, 0-100. */
  rollout: number
}

/**
 * How a tenant declares one of its event attributes (docs/rules.md): `hashed` stores and shows only its
 * keyed hash (rules may only test it for equality); `counted` keeps distinct accounts and events per
 * value over 10 minutes, 1 hour and 24 hours for rules to read.
 */
export interface AttributeSpec {
  hashed?: boolean
  counted?: boolean
}
export type AttributeSpecs = Record<string, AttributeSpec>

/** The variables a rule's condition sees (docs/rules.md lists them with their types). */
export type RuleVariables = Record<string, unknown>

/** A comparison of a variable with a number literal (`score >= 70`), the variable on the left. */
export interface NumberGuard {
  path: readonly string[]
  test: '<' | '<=' | '>' | '>=' | '=='
  value: number | bigint
}

/**
 * A test the engine makes before evaluating a rule (plan.ts, `guardHolds`), found in the condition's
 * syntax tree when it was compiled: the condition cannot hold unless it passes, so a rule whose guard
 * fails is skipped without running the evaluator. `true`/`false`: the variable is exactly that boolean;
 * `has`: the last key is present; `contains`: the variable (a list, or a map's keys) holds the string;
 * `oneOf`: the variable is one of the strings; a comparison: the variable is a number that compares so.
 */
export type Guard =
  | { path: readonly string[]; test: 'true' | 'false' | 'has' }
  | { path: readonly string[]; test: 'contains'; value: string }
  | { path: readonly string[]; test: 'oneOf'; values: readonly string[] }
  | NumberGuard

/**
 * A rule ready to run: `test` evaluates the compiled condition (a thrown error, e.g. a missing key,
 * means "does not hold"), `reads` names the variables whose values become the firing's evidence.
 * Compiling needs the CEL library, so the services compile and the engine only calls `test`.
 */
export interface CompiledRule {
  spec: RuleSpec
  test: (vars: RuleVariables) => boolean
  reads: readonly string[]
  /** Every variable path the condition names: the variables built for it (a superset of `reads`). */
  needs: readonly string[]
  /** The event names the condition can hold for (from its syntax tree), or null for any name. */
  eventNames: readonly string[] | null
  /** Tests the variables must pass for the condition to hold (checked before evaluating it). */
  guards: readonly Guard[]
}

/** Reason codes of tenant rules live in their own namespace: built-in codes never contain a colon. */
export const CUSTOM_PREFIX = 'rule:'
export type CustomReason = `rule:${string}`
export const customReason = (id: string): CustomReason => `${CUSTOM_PREFIX}${id}`
export const isCustomReason = (code: string): code is CustomReason => code.startsWith(CUSTOM_PREFIX)
