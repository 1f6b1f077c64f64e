import type { ListedKind } from '../../util/entities.js'
import type { EngineInput } from '../types.js'
import type { RuleVariables } from './types.js'

/**
 * The variables of a rule's condition, built from the engine input and the built-in result
 * (docs/rules.md lists each with its type). Absent identifiers give `present: false` and null fields,
 * so a rule can test `ip.present` instead of failing on a missing value.
 */
/** CEL keeps int and double apart (`1 == 1.0` has no overload): whole numbers go in as int. */
const num = (n: number): bigint | number => (Number.isSafeInteger(n) ? BigInt(n) : n)

function celValue(v: unknown): unknown {
  if (typeof v === 'number') return num(v)
  if (Array.isArray(v)) return v.map(celValue)
  return v
}

const attributes = (a: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, celValue(v)]))

export function ruleVariables(
  input: EngineInput,
  builtIn: { reasons: string[]; score: number },
): RuleVariables {
  const f = input.facts
  const ip = input.ip
  const email = input.email
  const dev = input.history.device ?? null
  const flags = input.device ?? {}
  const listed = (list: 'allow' | 'block') => input.lists.filter((l) => l.list === list).map((l) => l.type)
  // The names of the lists (allow, block and named ones) each identifier of the event is on.
  const on = (type: ListedKind) => input.lists.filter((l) => l.type === type).map((l) => l.list)
  return {
    event: {
      name: f?.event.name ?? '',
      attributes: attributes(f?.event.attributes ?? {}),
      country: input.eventCountry,
      ip_country: input.ipCountry,
      source: f?.event.source ?? null,
      site: f?.event.site ?? null,
      campaign: f?.event.campaign ?? null,
      affiliate: f?.event.affiliate ?? null,
    },
    ip: {
      present: ip !== null,
      asn: ip?.asn != null ? BigInt(ip.asn) : null,
      org: ip?.org ?? null,
      country: ip?.geoCountry ?? null,
      datacenter: ip?.isDatacenter ?? false,
      vpn: ip?.isVpn ?? false,
      proxy: ip?.isProxy ?? false,
      tor: ip?.isTor ?? false,
      relay: ip?.isPrivacyRelay ?? false,
    },
    email: {
      present: email !== null,
      domain: email?.domain ?? null,
      free: f?.email?.free ?? false,
      disposable: email?.isDisposable ?? false,
      no_mx: email?.mx === 'none',
      gibberish: email?.looksGibberish ?? false,
      tag: email?.hasPlusTag ?? false,
      aliased: f?.email?.aliased ?? false,
      alias_tricks: f?.email?.alias_tricks ?? [],
    },
    phone: {
      present: f?.phone != null,
      country: f?.phone?.country ?? null,
      line_type: f?.phone?.line_type ?? null,
      voip: f?.phone?.voip ?? false,
      disposable: f?.phone?.disposable ?? false,
    },
    device: {
      present: dev !== null,
      rung: BigInt(dev?.rung ?? 3),
      accounts: BigInt(dev?.accounts ?? 0),
      accounts_same_network: BigInt(dev?.accountsSameNetwork ?? 0),
      recent_events: BigInt(dev?.recentEvents ?? 0),
      headless: flags.is_headless === true,
      emulated: flags.is_emulated === true || flags.is_emulator === true,
      tampered: flags.is_tampered === true,
      rooted: flags.is_rooted === true,
      ua_consistent: flags.ua_consistent !== false,
      antidetect_score: BigInt(flags.antidetect_score ?? 0),
      ja4_known_tool: input.tls?.knownTool ?? null,
    },
    velocity: { ip_accounts: BigInt(input.history.ipAccounts ?? 0) },
    // Counted attributes by key: counts.card_fp.accounts_24h (docs/rules.md).
    counts: Object.fromEntries(
      Object.entries(input.history.attributes ?? {}).map(([k, c]) => [
        k,
        Object.fromEntries(Object.entries(c).map(([w, n]) => [w, BigInt(n)])),
      ]),
    ),
    lists: {
      allow: listed('allow'),
      block: listed('block'),
      user: on('user'),
      device: on('device'),
      ip: on('ip'),
      email: on('email'),
      phone: on('phone'),
    },
    timezone: input.timezone?.zone ?? null,
    reasons: builtIn.reasons,
    score: num(builtIn.score),
  }
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
  },
  timezone: 'dyn',
  reasons: 'list<string>',
  score: 'dyn',
} as const
