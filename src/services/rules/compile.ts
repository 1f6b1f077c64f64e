import { Environment } from '@marcbachmann/cel-js'
import { ApiError } from '../../errors.js'
import type { AttributeSpecs, CompiledRule, RuleSpec, RuleVariables } from '../../scoring/rules/types.js'
import { VARIABLE_CLASSES, VARIABLE_TYPES } from '../../scoring/rules/variables.js'
import {
  type ConfigOverrides,
  DEFAULT_THRESHOLDS,
  DEFAULT_WEIGHTS,
  effectiveConfig,
  type ScoringConfig,
} from '../../scoring/tenant-config.js'
import { eventNames, guards, inspect, Misuse } from './analyse.js'

/** Bounds of a tenant's rules (docs/rules.md, "Limits"). */
export const RULE_LIMITS = {
  rules: 200,
  expressionChars: 2000,
  /** Parse-time bounds: no rule can be large enough to make scoring slow. */
  astNodes: 400,
  depth: 32,
  /** Comprehensions (`all`, `exists`, `map`, `filter`…) inside comprehensions: each level multiplies. */
  nestedMacros: 2,
} as const

export const RULE_ID = /^[a-z][a-z0-9_]{0,39}$/

/** The CEL environment: every variable of docs/rules.md declared with its type, nothing else. */
function environment(): Environment {
  let env = new Environment({
    unlistedVariablesAreDyn: false,
    limits: { maxAstNodes: RULE_LIMITS.astNodes, maxDepth: RULE_LIMITS.depth },
  })
  for (const [name, type] of Object.entries(VARIABLE_TYPES)) {
    if (typeof type === 'string') env = env.registerVariable(name, type)
    else {
      const typeName = `verdict.${name}`
      // The group's own class: the engine builds its variables as instances of it, read as they are.
      const ctor = VARIABLE_CLASSES[name as keyof typeof VARIABLE_CLASSES]
      env = env.registerType(typeName, { ctor, fields: { ...type } }).registerVariable(name, typeName)
    }
  }
  return env
}

const ENV = environment()

/** A rule the config cannot take: which rule, where in its condition, and what is wrong. */
export class RuleProblem extends ApiError {
  constructor(index: number, id: string | undefined, problem: string, position?: number) {
    const where = position === undefined ? '' : ` at position ${position}`
    super('bad_request', `rules[${index}]${id ? ` (${id})` : ''}: ${problem}${where}`)
  }
}

/** The character offset a CEL error points at, when it says. */
function positionOf(err: unknown): number | undefined {
  const node = (err as { node?: { start?: number; pos?: number } }).node
  const at = node?.start ?? node?.pos
  return typeof at === 'number' ? at : undefined
}

const firstLine = (err: unknown) =>
  String((err as Error).message ?? err)
    .split('\n')[0]!
    .trim()

/**
 * How a tenant's string literals compared with its hashed attributes are hashed: the same keyed hash
 * its attribute values get (services/rules/attribute-hash.ts). `scope` (the tenant) keys the cache.
 */
export interface LiteralHash {
  scope: string
  hash: (value: string) => string
}

/**
 * The condition with each string literal compared with a hashed attribute replaced by its keyed hash:
 * the program that runs. The config keeps the rule as the tenant wrote it.
 */
function withHashedLiterals(
  when: string,
  literals: readonly { start: number; end: number; value: string }[],
  literalHash: LiteralHash | undefined,
): string {
  // Only a command line run without the server secret compiles without it.
  if (!literalHash)
    throw new ApiError(
      'unprocessable',
      'a rule compares a hashed attribute with a string: compiling it needs the server secret (VERDICT_SECRET)',
    )
  let text = ''
  let at = 0
  for (const l of literals) {
    text += `${when.slice(at, l.start)}'${literalHash.hash(l.value)}'`
    at = l.end
  }
  return text + when.slice(at)
}

function compileOne(
  spec: RuleSpec,
  index: number,
  hashed: ReadonlySet<string>,
  literalHash: LiteralHash | undefined,
): CompiledRule {
  if (spec.when.length > RULE_LIMITS.expressionChars)
    throw new RuleProblem(index, spec.id, `when is longer than ${RULE_LIMITS.expressionChars} characters`)
  let program: ReturnType<Environment['parse']>
  try {
    program = ENV.parse(spec.when)
  } catch (err) {
    throw new RuleProblem(index, spec.id, `syntax error: ${firstLine(err)}`, positionOf(err))
  }
  const check = program.check()
  if (!check.valid) throw new RuleProblem(index, spec.id, firstLine(check.error), positionOf(check.error))
  if (check.type !== 'bool' && check.type !== 'dyn')
    throw new RuleProblem(index, spec.id, `when must be a condition (bool), not ${check.type}`)
  let inspected: ReturnType<typeof inspect>
  try {
    inspected = inspect(program.ast, hashed)
  } catch (err) {
    if (!(err instanceof Misuse)) throw err
    throw new RuleProblem(index, spec.id, err.problem, err.position)
  }
  const { reads, needs, macroDepth, hashedLiterals } = inspected
  if (macroDepth > RULE_LIMITS.nestedMacros)
    throw new RuleProblem(
      index,
      spec.id,
      `comprehensions nest ${macroDepth} deep; at most ${RULE_LIMITS.nestedMacros} are allowed`,
    )
  let run = program
  if (hashedLiterals.length > 0) {
    // The same tree with other strings: it parses and checks as the original did.
    run = ENV.parse(withHashedLiterals(spec.when, hashedLiterals, literalHash))
    const again = run.check()
    if (!again.valid) throw again.error
  }
  const names = eventNames(run.ast)
  return {
    spec,
    reads,
    needs,
    eventNames: names === null ? null : [...names].sort(),
    guards: guards(run.ast),
    test: (vars: RuleVariables) => {
      try {
        return run(vars) === true
      } catch {
        // An evaluation error (a missing attribute, a type mismatch in dyn values) means "does not hold".
        return false
      }
    },
  }
}

/** The rule paths of a tenant's hashed attributes. */
export const hashedPaths = (attributes: AttributeSpecs | undefined): Set<string> =>
  new Set(
    Object.entries(attributes ?? {})
      .filter(([, a]) => a.hashed === true)
      .map(([k]) => `event.attributes.${k}`),
  )

/**
 * Compiles a tenant's rules, or throws a RuleProblem naming the first rule that cannot be taken.
 * `literalHash` is needed when a rule compares a hashed attribute with a string.
 */
export function compileRules(
  specs: readonly RuleSpec[],
  attributes?: AttributeSpecs,
  literalHash?: LiteralHash,
): CompiledRule[] {
  const hashed = hashedPaths(attributes)
  if (specs.length > RULE_LIMITS.rules)
    throw new ApiError('bad_request', `rules: at most ${RULE_LIMITS.rules} rules per tenant`)
  const seen = new Set<string>()
  return specs.map((spec, i) => {
    if (!RULE_ID.test(spec.id))
      throw new RuleProblem(
        i,
        undefined,
        'id must be lower-case letters, digits and _ (1-40), starting with a letter',
      )
    if (seen.has(spec.id)) throw new RuleProblem(i, spec.id, 'id is used by another rule')
    seen.add(spec.id)
    return compileOne(spec, i, hashed, literalHash)
  })
}

/** Compiled rule sets by their source, so each config version is compiled once per process. */
const cache = new Map<string, CompiledRule[]>()
const CACHE_MAX = 1000

/**
 * The same array (a cached config's) with the same attribute declarations (the same object) maps to its
 * compiled rules without serialising either again.
 */
const byArray = new WeakMap<
  readonly RuleSpec[],
  { attributes: AttributeSpecs | undefined; scope: string | undefined; rules: CompiledRule[] }
>()

export function compiledRules(
  specs: readonly RuleSpec[] | undefined,
  attributes?: AttributeSpecs,
  literalHash?: LiteralHash,
): CompiledRule[] {
  if (!specs || specs.length === 0) return []
  const scope = literalHash?.scope
  const known = byArray.get(specs)
  if (known && known.attributes === attributes && known.scope === scope) return known.rules
  const hashed = [...hashedPaths(attributes)].sort()
  // Literals compared with hashed attributes are hashed per tenant: such rule sets are the tenant's own.
  const key = JSON.stringify([specs, hashed, hashed.length > 0 ? (scope ?? null) : null])
  let rules = cache.get(key)
  if (!rules) {
    rules = compileRules(specs, attributes, literalHash)
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string)
    cache.set(key, rules)
  }
  byArray.set(specs, { attributes, scope, rules })
  return rules
}

/** A configuration as versions store it: the effective weights and thresholds, and the rules' source. */
export interface EffectiveConfig {
  weights: ScoringConfig['weights']
  thresholds: ScoringConfig['thresholds']
  rules?: RuleSpec[]
  attributes?: AttributeSpecs
}

/** The effective configuration of some overrides, rules as written (what a version records). */
export function effectiveOf(
  o: ConfigOverrides & { rules?: RuleSpec[]; attributes?: AttributeSpecs },
): EffectiveConfig {
  const { weights, thresholds } = effectiveConfig(o)
  const base: EffectiveConfig = { weights, thresholds }
  if (o.rules && o.rules.length > 0) base.rules = o.rules
  if (o.attributes && Object.keys(o.attributes).length > 0) base.attributes = o.attributes
  return base
}

/** The engine's configuration: rules compiled (once per distinct rule set and process). */
export function scoringConfig(c: EffectiveConfig, literalHash?: LiteralHash): ScoringConfig {
  const rules = compiledRules(c.rules, c.attributes, literalHash)
  // A version recorded before a weight became configurable lacks its key: the default (the weight it
  // was fixed at then) applies, so its events replay identically.
  const weights = { ...DEFAULT_WEIGHTS, ...c.weights }
  const thresholds = { ...DEFAULT_THRESHOLDS, ...c.thresholds }
  return rules.length > 0 ? { weights, thresholds, rules } : { weights, thresholds }
}
