/**
 * What a rule's condition reads, found in its syntax tree (cel-js's AST) when the rule is compiled:
 * the variables its evidence shows, the variables it may read at all (the only ones built for it),
 * its comprehension nesting, the event names it can hold for, and where it misuses a hashed attribute.
 */

import type { Guard, NumberGuard } from '../../scoring/rules/types.js'

export interface Node {
  op: string
  args: unknown
  start?: number
  end?: number
}

export const isNode = (v: unknown): v is Node =>
  typeof v === 'object' && v !== null && 'op' in v && 'args' in v

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter'])

/** A use of a variable the rule cannot make (docs/rules.md, "Hashed and counted attributes"). */
export class Misuse {
  constructor(
    readonly problem: string,
    readonly position: number | undefined,
  ) {}
}

const hashedMisuse = (path: string, position: number | undefined, why: string) =>
  new Misuse(`${path} is hashed: ${why}`, position)

const EQUALITY = new Set(['==', '!=', 'in'])

/** The dotted variable path a node names (`event.attributes.amount`, `event['name']`), or null. */
export function pathOf(n: Node): string | null {
  if (n.op === 'id' && typeof n.args === 'string') return n.args
  if (n.op === '.' && Array.isArray(n.args) && isNode(n.args[0]) && typeof n.args[1] === 'string') {
    const base = pathOf(n.args[0])
    return base === null ? null : `${base}.${n.args[1]}`
  }
  if (n.op === '[]' && Array.isArray(n.args) && isNode(n.args[0]) && isNode(n.args[1])) {
    const key = n.args[1]
    const base = pathOf(n.args[0])
    if (base !== null && key.op === 'value' && typeof key.args === 'string') return `${base}.${key.args}`
  }
  return null
}

export interface Inspection {
  /** Variable paths the condition reads (its evidence), comprehension variables left out. */
  reads: string[]
  /**
   * Every path the condition names, comprehension variables included: a superset of what it can read,
   * so building just these variables never hides a value from it.
   */
  needs: string[]
  macroDepth: number
  /** String literals compared with a hashed attribute: hashed when the rule is compiled. */
  hashedLiterals: { start: number; end: number; value: string }[]
}

const stringValue = (v: unknown): string | null =>
  isNode(v) && v.op === 'value' && typeof v.args === 'string' ? v.args : null
const isLiteral = (v: unknown): v is Node =>
  isNode(v) && (v.op === 'value' || v.op === 'list' || v.op === 'map')

const ONLY_EQUALITY = 'compare it only with ==, != or in, or test it with has()'
const NOT_THIS_LITERAL =
  'its value is a keyed hash: compare it with a string (hashed when the rule is saved) or another value, not this literal'

/**
 * Walks the AST: the dotted variable paths a condition reads, and its deepest comprehension nesting.
 * A hashed attribute (`hashed` holds their paths) may only be an operand of `==` or `!=`, either side
 * of `in`, or inside `has()`; a literal it is compared with must be a string (or, right of `in`, a list
 * of strings), which the compiler replaces by its keyed hash. `lists.attributes.<key>` must name a
 * hashed attribute (only those are looked up in lists). Throws a Misuse otherwise.
 */
export function inspect(root: unknown, hashed: ReadonlySet<string>): Inspection {
  const reads = new Set<string>()
  const needs = new Set<string>()
  const hashedLiterals: Inspection['hashedLiterals'] = []
  let macroDepth = 0
  const hashedPath = (v: unknown): string | null => {
    const p = isNode(v) ? pathOf(v) : null
    return p !== null && hashed.has(p) ? p : null
  }
  /** A literal compared with the hashed attribute at `path`: kept for hashing, or refused. */
  const literal = (v: unknown, path: string): boolean => {
    if (!isLiteral(v)) return false
    const s = stringValue(v)
    if (s === null || v.start === undefined || v.end === undefined)
      throw hashedMisuse(path, v.start, NOT_THIS_LITERAL)
    hashedLiterals.push({ start: v.start, end: v.end, value: s })
    return true
  }
  const walk = (v: unknown, depth: number, bound: Set<string>, equality = false): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth, bound)
      return
    }
    if (!isNode(v)) return
    const p = pathOf(v)
    if (p !== null) {
      needs.add(p)
      if (!bound.has(p.split('.')[0]!)) reads.add(p)
      if (hashed.has(p) && !equality) throw hashedMisuse(p, v.start, ONLY_EQUALITY)
      const listed = /^lists\.attributes\.([^.]+)/.exec(p)
      if (listed && !hashed.has(`event.attributes.${listed[1]}`))
        throw new Misuse(
          `${listed[0]}: only hashed attributes are looked up in lists, and ${listed[1]} is not declared hashed`,
          v.start,
        )
      if (v.op !== 'id') return
    }
    if (EQUALITY.has(v.op) && Array.isArray(v.args) && v.args.length === 2) {
      const [l, r] = v.args as [unknown, unknown]
      const lh = hashedPath(l)
      const rh = hashedPath(r)
      if (v.op !== 'in') {
        // a == b, a != b: a literal facing a hashed attribute is hashed; anything else is compared as is.
        if (!(lh !== null && literal(r, lh))) walk(r, depth, bound, true)
        if (!(rh !== null && literal(l, rh))) walk(l, depth, bound, true)
        return
      }
      if (lh !== null && isNode(r) && r.op === 'list' && Array.isArray(r.args)) {
        // hashed in ['a', 'b']: each string is hashed.
        for (const e of r.args) if (!literal(e, lh)) walk(e, depth, bound, true)
      } else if (lh !== null && isLiteral(r)) throw hashedMisuse(lh, r.start, NOT_THIS_LITERAL)
      // 'a' in hashed (a hashed list of strings): the string is hashed.
      else walk(r, depth, bound, rh !== null)
      if (!(rh !== null && literal(l, rh))) walk(l, depth, bound, true)
      return
    }
    if (v.op === 'call' && Array.isArray(v.args) && v.args[0] === 'has') {
      const inner = v.args[1]
      for (const x of Array.isArray(inner) ? inner : [inner]) walk(x, depth, bound, true)
      return
    }
    if (v.op === 'rcall' && Array.isArray(v.args) && MACROS.has(String(v.args[0]))) {
      const d = depth + 1
      macroDepth = Math.max(macroDepth, d)
      const [, target, params] = v.args as [string, unknown, unknown[]]
      walk(target, depth, bound)
      const inner = new Set(bound)
      const first = Array.isArray(params) ? params[0] : undefined
      if (isNode(first) && first.op === 'id' && typeof first.args === 'string') inner.add(first.args)
      walk(Array.isArray(params) ? params.slice(1) : params, d, inner)
      return
    }
    walk(v.args, depth, bound)
  }
  walk(root, 0, new Set())
  hashedLiterals.sort((a, b) => a.start - b.start)
  return { reads: [...reads].sort(), needs: [...needs].sort(), macroDepth, hashedLiterals }
}

const isName = (v: unknown) => isNode(v) && pathOf(v) === 'event.name'
/**
 * The event names a condition can hold for, or null when it may hold for any. Exact by construction:
 * `event.name == 'x'` (either side) holds only for x, `event.name in ['x', 'y']` only for x and y;
 * `a && b` only where both can, `a || b` and `c ? a : b` where either can. Anything else (a negation,
 * `!=`, a comprehension, a function) may hold for any name. Conditions are only ever narrowed by what
 * must be true for them to be true, so leaving a rule out for other names never changes a result.
 */
export function eventNames(n: unknown): Set<string> | null {
  if (!isNode(n) || !Array.isArray(n.args)) return null
  const args = n.args as unknown[]
  switch (n.op) {
    case '&&': {
      const a = eventNames(args[0])
      const b = eventNames(args[1])
      if (a === null) return b
      if (b === null) return a
      return new Set([...a].filter((x) => b.has(x)))
    }
    case '||':
    case '?:': {
      const [a, b] = n.op === '||' ? [args[0], args[1]] : [args[1], args[2]]
      const x = eventNames(a)
      const y = eventNames(b)
      return x === null || y === null ? null : new Set([...x, ...y])
    }
    case '==': {
      const [l, r] = args
      const named = isName(l) ? stringValue(r) : isName(r) ? stringValue(l) : null
      return named === null ? null : new Set([named])
    }
    case 'in': {
      const [l, r] = args
      if (!isName(l) || !isNode(r) || r.op !== 'list' || !Array.isArray(r.args)) return null
      const values = (r.args as unknown[]).map(stringValue)
      return values.every((v) => v !== null) ? new Set(values as string[]) : null
    }
    default:
      return null
  }
}

/** The top-level conjuncts of a condition: `a && (b && c)` is a, b and c. */
function conjuncts(n: unknown, out: unknown[] = []): unknown[] {
  if (isNode(n) && n.op === '&&' && Array.isArray(n.args)) {
    for (const a of n.args) conjuncts(a, out)
  } else out.push(n)
  return out
}

const COMPARISONS = new Set(['<', '<=', '>', '>=', '=='])
const MIRROR: Record<string, Guard['test']> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==' }
const numberValue = (v: unknown): number | bigint | null =>
  isNode(v) && v.op === 'value' && (typeof v.args === 'bigint' || typeof v.args === 'number') ? v.args : null
const pathNode = (v: unknown): string[] | null => {
  const p = isNode(v) ? pathOf(v) : null
  return p === null || p === 'event.name' ? null : p.split('.')
}

/** A conjunct the engine can test without the evaluator, or null. */
function guardOf(c: unknown): Guard | null {
  if (!isNode(c)) return null
  const path = pathNode(c)
  if (path) return { path, test: 'true' }
  if (c.op === '!_') {
    const p = pathNode(c.args)
    return p ? { path: p, test: 'false' } : null
  }
  if (!Array.isArray(c.args)) return null
  const [l, r] = c.args as unknown[]
  if (c.op === 'call' && l === 'has' && Array.isArray(r) && r.length === 1) {
    const p = pathNode(r[0])
    return p && p.length > 1 ? { path: p, test: 'has' } : null
  }
  if (c.op === 'in') {
    const s = stringValue(l)
    const right = pathNode(r)
    if (s !== null && right) return { path: right, test: 'contains', value: s }
    const left = pathNode(l)
    if (!left || !isNode(r) || r.op !== 'list' || !Array.isArray(r.args)) return null
    const values = (r.args as unknown[]).map(stringValue)
    return values.every((v) => v !== null) ? { path: left, test: 'oneOf', values: values as string[] } : null
  }
  if (!COMPARISONS.has(c.op)) return null
  for (const [side, other, op] of [
    [l, r, c.op],
    [r, l, MIRROR[c.op]!],
  ] as const) {
    const p = pathNode(side)
    if (!p) continue
    const s = stringValue(other)
    if (c.op === '==' && s !== null) return { path: p, test: 'oneOf', values: [s] }
    const n = numberValue(other)
    if (n !== null) return { path: p, test: op as NumberGuard['test'], value: n }
  }
  return null
}

/**
 * What must be true of the variables for a condition to hold, as tests the engine makes without the
 * evaluator (types.ts, Guard): of its top-level conjuncts (a condition `a && b` holds only when a and
 * b both do), those that are a variable (`ip.vpn`), its negation, `has(...)`, `'x' in <variable>`,
 * `<variable> in ['x', ...]`, or a comparison of a variable with a string or number literal. Each
 * guard fails only where its conjunct cannot be true, so skipping a rule whose guard fails never
 * changes a result.
 */
export function guards(root: unknown): Guard[] {
  return conjuncts(root)
    .map(guardOf)
    .filter((g): g is Guard => g !== null)
}
