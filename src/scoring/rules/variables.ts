import type { ListedKind } from '../../util/entities.js'
import type { EngineInput } from '../types.js'
import type { RuleVariables } from './types.js'

/** What the built-in checks concluded before the rules run: their reason codes and the clamped score. */
export interface BuiltIn {
  reasons: string[]
  score: number
}

type Field = (input: EngineInput, builtIn: BuiltIn) => unknown

/** CEL keeps int and double apart (`1 == 1.0` has no overload): whole numbers go in as int. */
const num = (n: number): bigint | number => (Number.isSafeInteger(n) ? BigInt(n) : n)

function celValue(v: unknown): unknown {
  if (typeof v === 'number') return num(v)
  if (Array.isArray(v)) return v.map(celValue)
  return v
}

function attributes(a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k in a) out[k] = celValue(a[k])
  return out
}

/** The identifier types of this event on the allow or block list. */
const listed = (i: EngineInput, list: 'allow' | 'block') => {
  const out: string[] = []
  for (const l of i.lists) if (l.list === list) out.push(l.type)
  return out
}
/** The names of the lists (allow, block and named ones) an identifier of the event is on. */
const on = (i: EngineInput, type: ListedKind) => {
  const out: string[] = []
  for (const l of i.lists) if (l.type === type) out.push(l.list)
  return out
}

const dev = (i: EngineInput) => i.history.device ?? null
const flags = (i: EngineInput) => i.device ?? {}

/**
 * How each variable of a rule's condition is made from the engine input and the built-in result
 * (docs/rules.md lists each with its type). Absent identifiers give `present: false` and null fields,
 * so a rule can test `ip.present` instead of failing on a missing value. Grouped variables (`ip.vpn`)
 * are fields of an object; an event gets only the fields its rules may read (plan.ts).
 */
const GROUP_FIELDS = {
  event: {
    name: (i) => i.facts?.event.name ?? '',
    attributes: (i) => attributes(i.facts?.event.attributes ?? {}),
    country: (i) => i.eventCountry,
    ip_country: (i) => i.ipCountry,
    source: (i) => i.facts?.event.source ?? null,
    site: (i) => i.facts?.event.site ?? null,
    campaign: (i) => i.facts?.event.campaign ?? null,
    affiliate: (i) => i.facts?.event.affiliate ?? null,
  },
  ip: {
    present: (i) => i.ip !== null,
    asn: (i) => (i.ip?.asn != null ? BigInt(i.ip.asn) : null),
    org: (i) => i.ip?.org ?? null,
    country: (i) => i.ip?.geoCountry ?? null,
    datacenter: (i) => i.ip?.isDatacenter ?? false,
    vpn: (i) => i.ip?.isVpn ?? false,
    proxy: (i) => i.ip?.isProxy ?? false,
    tor: (i) => i.ip?.isTor ?? false,
    relay: (i) => i.ip?.isPrivacyRelay ?? false,
  },
  email: {
    present: (i) => i.email !== null,
    domain: (i) => i.email?.domain ?? null,
    free: (i) => i.facts?.email?.free ?? false,
    disposable: (i) => i.email?.isDisposable ?? false,
    no_mx: (i) => i.email?.mx === 'none',
    gibberish: (i) => i.email?.looksGibberish ?? false,
    tag: (i) => i.email?.hasPlusTag ?? false,
    aliased: (i) => i.facts?.email?.aliased ?? false,
    alias_tricks: (i) => i.facts?.email?.alias_tricks ?? [],
  },
  phone: {
    present: (i) => i.facts?.phone != null,
    country: (i) => i.facts?.phone?.country ?? null,
    line_type: (i) => i.facts?.phone?.line_type ?? null,
    voip: (i) => i.facts?.phone?.voip ?? false,
    disposable: (i) => i.facts?.phone?.disposable ?? false,
  },
  device: {
    present: (i) => dev(i) !== null,
    rung: (i) => BigInt(dev(i)?.rung ?? 3),
    accounts: (i) => BigInt(dev(i)?.accounts ?? 0),
    accounts_same_network: (i) => BigInt(dev(i)?.accountsSameNetwork ?? 0),
    recent_events: (i) => BigInt(dev(i)?.recentEvents ?? 0),
    headless: (i) => flags(i).is_headless === true,
    emulated: (i) => flags(i).is_emulated === true || flags(i).is_emulator === true,
    tampered: (i) => flags(i).is_tampered === true,
    rooted: (i) => flags(i).is_rooted === true,
    ua_consistent: (i) => flags(i).ua_consistent !== false,
    antidetect_score: (i) => BigInt(flags(i).antidetect_score ?? 0),
    ja4_known_tool: (i) => i.tls?.knownTool ?? null,
  },
  velocity: { ip_accounts: (i) => BigInt(i.history.ipAccounts ?? 0) },
  lists: {
    allow: (i) => listed(i, 'allow'),
    block: (i) => listed(i, 'block'),
    user: (i) => on(i, 'user'),
    device: (i) => on(i, 'device'),
    ip: (i) => on(i, 'ip'),
    email: (i) => on(i, 'email'),
    phone: (i) => on(i, 'phone'),
    // Per attribute key of the event, the named lists its (hashed) value is on: lists.attributes.card_fp.
    attributes: (i) => {
      const out: Record<string, string[]> = {}
      for (const k of Object.keys(i.facts?.event.attributes ?? {})) out[k] = []
      for (const l of i.lists) {
        if (l.type !== 'attribute' || l.attribute === undefined) continue
        out[l.attribute] = [...(out[l.attribute] ?? []), l.list]
      }
      return out
    },
  },
} satisfies Record<string, Record<string, Field>>

/** Variables that are values themselves, not groups of fields. */
const SINGLE = {
  // Counted attributes by key: counts.card_fp.accounts_24h (docs/rules.md).
  counts: (i) => {
    const out: Record<string, Record<string, bigint>> = {}
    const all = i.history.attributes ?? {}
    for (const k in all) {
      const c = all[k]!
      const windows: Record<string, bigint> = {}
      for (const w in c) windows[w] = BigInt(c[w as keyof typeof c])
      out[k] = windows
    }
    return out
  },
  timezone: (i) => i.timezone?.zone ?? null,
  reasons: (_, b) => b.reasons,
  score: (_, b) => num(b.score),
} satisfies Record<string, Field>

type Group = keyof typeof GROUP_FIELDS

/**
 * Each group's objects are instances of its own class: the CEL environment registers the class as the
 * group's type (services/rules/compile.ts), so the evaluator reads their fields as they are instead of
 * wrapping a plain object anew on every evaluation.
 */
export const VARIABLE_CLASSES: Record<Group, new () => Record<string, unknown>> = {
  event: class EventVariables {} as new () => Record<string, unknown>,
  ip: class IpVariables {} as new () => Record<string, unknown>,
  email: class EmailVariables {} as new () => Record<string, unknown>,
  phone: class PhoneVariables {} as new () => Record<string, unknown>,
  device: class DeviceVariables {} as new () => Record<string, unknown>,
  velocity: class VelocityVariables {} as new () => Record<string, unknown>,
  lists: class ListVariables {} as new () => Record<string, unknown>,
}

const isGroup = (name: string): name is Group => Object.hasOwn(GROUP_FIELDS, name)
const isSingle = (name: string): name is keyof typeof SINGLE => Object.hasOwn(SINGLE, name)

/** Not made yet, in an event's memo of variables (`VariableMemo`). */
export const UNMADE: unique symbol = Symbol('unmade')

/**
 * The variables of an event made so far, by their index in a rule set's list (`plan.ts`): each is made
 * once per event, whether a guard or a rule's variables need it first.
 */
export type VariableMemo = unknown[]

/** One variable: a group's field (`ip.vpn`) or a variable of its own (`reasons`). */
export interface Variable {
  key: string
  group: Group | null
  field: string
  make: Field
}

/**
 * The variable a path starts with and the rest of the path inside its value:
 * `event.attributes.amount` is `event.attributes` and `['amount']`; null when the path names a whole
 * group or no variable (a comprehension's own name).
 */
export function variableOf(path: readonly string[]): { variable: Variable; rest: string[] } | null {
  const [root, field] = path
  if (root !== undefined && isSingle(root))
    return {
      variable: { key: root, group: null, field: root, make: SINGLE[root] as Field },
      rest: path.slice(1),
    }
  if (
    root === undefined ||
    !isGroup(root) ||
    field === undefined ||
    !Object.hasOwn(GROUP_FIELDS[root], field)
  )
    return null
  const make = (GROUP_FIELDS[root] as Record<string, Field>)[field]!
  return { variable: { key: `${root}.${field}`, group: root, field, make }, rest: path.slice(2) }
}

/**
 * The variables some paths reach (`ip.vpn`, `event.attributes.amount`, `reasons`): a group named
 * alone (`ip`) reaches all its fields; names that are not variables (a comprehension's own) none.
 */
export function reached(paths: Iterable<string>): Variable[] {
  const out = new Map<string, Variable>()
  for (const path of paths) {
    const parts = path.split('.')
    const root = parts[0]!
    const fields = isGroup(root) && parts.length === 1 ? Object.keys(GROUP_FIELDS[root]) : [parts[1]]
    for (const f of fields) {
      const v = variableOf(f === undefined ? [root] : [root, f])
      if (v) out.set(v.variable.key, v.variable)
    }
  }
  return [...out.values()]
}

/**
 * Adds to an event's variables those a rule may read that are not there yet, taking any the memo
 * holds already (made for a guard) and keeping what it makes there.
 */
export type VariableCompleter = (
  vars: RuleVariables,
  input: EngineInput,
  builtIn: BuiltIn,
  memo: VariableMemo,
) => void

/**
 * A completer for the variables the given paths reach; `slot` gives a variable's index in the memo.
 * Made once per rule set, so each event computes only what the rules it evaluates may read: a rule
 * never reads a field its paths do not name.
 */
export function variableCompleter(paths: Iterable<string>, slot: (key: string) => number): VariableCompleter {
  const steps = reached(paths).map((v) => ({
    ...v,
    slot: slot(v.key),
    Class: v.group && VARIABLE_CLASSES[v.group],
  }))
  return (vars, input, builtIn, memo) => {
    for (const { group, field, make, slot, Class } of steps) {
      let o: Record<string, unknown> = vars
      if (group !== null) {
        o = vars[group] as Record<string, unknown>
        if (o === undefined) vars[group] = o = new Class!()
      }
      if (Object.hasOwn(o, field)) continue
      let value = memo[slot]
      if (value === UNMADE) value = memo[slot] = make(input, builtIn)
      o[field] = value
    }
  }
}

/** Every variable: what a rule set that reads everything sees. */
const all = reached([...Object.keys(GROUP_FIELDS), ...Object.keys(SINGLE)]).map((v) => v.key)
const everything = variableCompleter(all, (key) => all.indexOf(key))

export function ruleVariables(input: EngineInput, builtIn: BuiltIn): RuleVariables {
  const vars: RuleVariables = {}
  everything(
    vars,
    input,
    builtIn,
    all.map(() => UNMADE),
  )
  return vars
}

/** The CEL type of every variable and field above, for the compiler's type check (docs/rules.md). */
export const VARIABLE_TYPES = {
  event: {
    name: 'string',
    attributes: 'map<string, dyn>',
    country: 'dyn',
    ip_country: 'dyn',
    source: 'dyn',
    site: 'dyn',
    campaign: 'dyn',
    affiliate: 'dyn',
  },
  ip: {
    present: 'bool',
    asn: 'dyn',
    org: 'dyn',
    country: 'dyn',
    datacenter: 'bool',
    vpn: 'bool',
    proxy: 'bool',
    tor: 'bool',
    relay: 'bool',
  },
  email: {
    present: 'bool',
    domain: 'dyn',
    free: 'bool',
    disposable: 'bool',
    no_mx: 'bool',
    gibberish: 'bool',
    tag: 'bool',
    aliased: 'bool',
    alias_tricks: 'list<string>',
  },
  phone: { present: 'bool', country: 'dyn', line_type: 'dyn', voip: 'bool', disposable: 'bool' },
  device: {
    present: 'bool',
    rung: 'int',
    accounts: 'int',
    accounts_same_network: 'int',
    recent_events: 'int',
    headless: 'bool',
    emulated: 'bool',
    tampered: 'bool',
    rooted: 'bool',
    ua_consistent: 'bool',
    antidetect_score: 'int',
    ja4_known_tool: 'dyn',
  },
  velocity: { ip_accounts: 'int' },
  counts: 'map<string, dyn>',
  lists: {
    allow: 'list<string>',
    block: 'list<string>',
    user: 'list<string>',
    device: 'list<string>',
    ip: 'list<string>',
    email: 'list<string>',
    phone: 'list<string>',
    attributes: 'map<string, list<string>>',
  },
  timezone: 'dyn',
  reasons: 'list<string>',
  score: 'dyn',
} as const satisfies Record<string, string | Record<string, string>>
