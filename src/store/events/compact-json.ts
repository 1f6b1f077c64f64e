/**
 * The compact form of the JSON an event row records (its engine input and its fired checks): an object
 * whose keys, in order, are one of the SHAPES below is written as an array `[shape, ...values]`, so the
 * key names are not repeated in every row. Everything else stays as JSON: strings are written exactly
 * as before (so no value is hidden from a byte search of the file), and an object of any other shape
 * keeps its keys. Decoding gives back exactly what `JSON.parse(JSON.stringify(value))` gives, keys in
 * the same order, so a recorded input replays as it did and the checks read back as the same text.
 *
 * The text starts with `~`, which no JSON text starts with: rows written before (plain JSON) still read.
 * An array whose first element is a number is written with a leading -1, so it cannot be taken for a
 * shape. Arrays are smaller and quicker for JSON.stringify than objects with their keys, so the encoding
 * costs about what the keys cost to write (docs/storage.md, "A compact event row").
 */

/**
 * Key lists, in the order the services build the objects. APPEND ONLY: a stored row names its shapes by
 * their index here, so an entry must never change or move. A shape missing here costs bytes, not
 * correctness: that object keeps its keys.
 */
export const SHAPES: readonly (readonly string[])[] = [
  // 0-12: the recorded engine input (scoring/recorded.ts)
  [
    'lists',
    'eventCountry',
    'ipCountry',
    'ip',
    'email',
    'device',
    'timezone',
    'network',
    'tls',
    'facts',
    'history',
  ],
  [
    'asn',
    'org',
    'geoCountry',
    'isDatacenter',
    'datacenterProvider',
    'isTor',
    'isVpn',
    'vpnProvider',
    'isProxy',
    'isPrivacyRelay',
  ],
  ['domain', 'isDisposable', 'relay', 'looksGibberish', 'gibberishScore', 'hasPlusTag', 'mx'],
  ['zone', 'countries'],
  ['flaggedOperators', 'flaggedKinds', 'trapHits', 'asn'],
  ['event', 'email', 'phone', 'subject'],
  ['name', 'attributes', 'source', 'site', 'campaign', 'affiliate'],
  ['free', 'aliased', 'alias_tricks'],
  ['country', 'line_type', 'voip', 'disposable'],
  ['ipAccounts', 'device', 'mailboxAccounts', 'account'],
  ['ipAccounts', 'device', 'mailboxAccounts', 'account', 'attributes'],
  ['rung', 'accounts', 'accountsSameNetwork', 'recentEvents', 'current', 'timeline'],
  ['ms', 'ipHash', 'connection'],
  // 13-19
  ['ms', 'ipHash', 'connection', 'beacon'],
  ['events', 'firstMs', 'nowMs', 'deviceSeen', 'countrySeen'],
  ['list', 'type'],
  ['ja4', 'knownTool', 'spoofSignature'],
  ['sessions', 'spoofing', 'minSessions', 'minShare'],
  ['accounts_10m', 'accounts_1h', 'accounts_24h', 'events_10m', 'events_1h', 'events_24h'],
  ['asn', 'events', 'bad', 'rate', 'threshold'],
  // 20: a fired check; 21-: the evidence of the built-in checks (scoring/checks/)
  ['check', 'key', 'weight', 'reason', 'message', 'evidence'],
  ['expected_country', 'ip_country', 'ip_country_source'],
  ['accounts', 'accounts_same_network', 'tier', 'threshold', 'corroborated', 'resolution_rung'],
  ['timezone', 'timezone_countries', 'ip_country'],
  ['accounts', 'tier'],
  ['distinct_ips', 'threshold', 'session_minutes'],
  ['domain'],
  ['from', 'to', 'session_minutes'],
  ['gibberish_score'],
  ['asn', 'org', 'provider'],
  ['asn', 'org'],
  ['asn', 'provider'],
  ['asn', 'tor', 'proxy', 'vpn'],
  ['antidetect_score', 'antidetect_confidence', 'min_score'],
  ['accounts', 'window_minutes', 'threshold', 'tier'],
  ['events', 'window_minutes', 'threshold'],
  ['earlier_events', 'account_age_days'],
  ['domain', 'service'],
  ['ja4', 'tool'],
  ['ja4', 'sessions', 'spoofing', 'share', 'min_sessions', 'min_share'],
  ['trap_hits', 'window_days'],
  ['asn', 'fraud_rate', 'events', 'threshold'],
  ['is_headless'],
  ['is_vpn_active'],
  // 44-45: the device history and device reuse evidence with the accounts sharing the event's mailbox
  ['rung', 'accounts', 'accountsSameNetwork', 'accountsSameMailbox', 'recentEvents', 'current', 'timeline'],
  [
    'accounts',
    'accounts_same_network',
    'accounts_same_mailbox',
    'tier',
    'threshold',
    'corroborated',
    'resolution_rung',
  ],
  // 46-47: the same when one browser's accounts count undivided (docs/device-identity.md, "One browser")
  ['rung', 'accounts', 'accountsSameNetwork', 'accountsOneBrowser', 'recentEvents', 'current', 'timeline'],
  [
    'accounts',
    'accounts_same_network',
    'accounts_one_browser',
    'tier',
    'threshold',
    'corroborated',
    'resolution_rung',
  ],
  // 48-51: a generated-mailbox sign-up's history (the wave's counts) and gibberish_wave's evidence
  ['ipAccounts', 'device', 'mailboxAccounts', 'account', 'generatedMailboxes'],
  ['ipAccounts', 'device', 'mailboxAccounts', 'account', 'generatedMailboxes', 'attributes'],
  ['recent', 'recentEvents', 'sameHours', 'sameHoursEvents'],
  ['recent', 'expected', 'window_hours', 'threshold'],
]

/** Candidate shapes by their first key. */
const BY_FIRST = new Map<string, number[]>()
SHAPES.forEach((keys, id) => {
  // An integer-like key would be re-ordered by the object that decoding builds.
  if (keys.some((k) => /^(0|[1-9]\d*)$/.test(k) || k === '__proto__')) throw new Error(`bad shape ${id}`)
  const list = BY_FIRST.get(keys[0]!) ?? []
  list.push(id)
  BY_FIRST.set(keys[0]!, list)
})

export const COMPACT_MARK = '~'

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol'

const OBJECT = Object.prototype

/** The shape whose keys are `keys` (in this order), or -1. */
function shapeOf(keys: readonly string[]): number {
  const candidates = keys.length === 0 ? undefined : BY_FIRST.get(keys[0]!)
  if (candidates === undefined) return -1
  next: for (const id of candidates) {
    const shape = SHAPES[id]!
    if (shape.length !== keys.length) continue
    for (let i = 1; i < shape.length; i++) if (shape[i] !== keys[i]) continue next
    return id
  }
  return -1
}

/**
 * `v` is an object (not null). One pass over a plain object's keys collects the keys JSON.stringify
 * writes and their encoded values (a value read by its for-in key is a quick load; reading by a shape's
 * key name was not, measured); primitives are copied inline.
 */
function encode(v: object): unknown {
  if (Array.isArray(v)) {
    const lead = typeof v[0] === 'number' ? 1 : 0
    const out: unknown[] = new Array(v.length + lead)
    if (lead === 1) out[0] = -1
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i]
      out[i + lead] = x === null || typeof x !== 'object' ? x : encode(x)
    }
    return out
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== OBJECT && proto !== null) {
    // Not a plain object (a Date, a class instance): whatever JSON.stringify makes of it, toJSON included.
    const text = JSON.stringify(v)
    if (text === undefined) return undefined
    const j: unknown = JSON.parse(text)
    return j === null || typeof j !== 'object' ? j : encode(j)
  }
  const o = v as Record<string, unknown>
  const keys: string[] = []
  // The shape's number goes first; it is set once the keys are known.
  const out: unknown[] = [0]
  for (const k in o) {
    const x = o[k]
    if (omitted(x)) continue
    keys.push(k)
    out.push(x === null || typeof x !== 'object' ? x : encode(x))
  }
  const id = shapeOf(keys)
  if (id >= 0) {
    out[0] = id
    return out
  }
  // No prototype, so a key named __proto__ stays an ordinary key.
  const raw: Record<string, unknown> = Object.create(null)
  for (let i = 0; i < keys.length; i++) raw[keys[i]!] = out[i + 1]
  return raw
}

function decode(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const head = v[0]
    if (typeof head !== 'number') {
      for (let i = 0; i < v.length; i++) v[i] = decode(v[i])
      return v
    }
    if (head === -1) {
      const out: unknown[] = new Array(v.length - 1)
      for (let i = 1; i < v.length; i++) out[i - 1] = decode(v[i])
      return out
    }
    const shape = SHAPES[head]
    if (shape === undefined || v.length !== shape.length + 1) throw new Error(`unknown record shape ${head}`)
    const out: Record<string, unknown> = {}
    for (let i = 0; i < shape.length; i++) out[shape[i]!] = decode(v[i + 1])
    return out
  }
  // An object JSON.parse made: its keys are its own, a __proto__ key included.
  const o = v as Record<string, unknown>
  for (const k of Object.keys(o)) o[k] = decode(o[k])
  return o
}

/** The compact text of a JSON value (what JSON.stringify would write, in fewer bytes). */
export function packJson(value: unknown): string {
  return COMPACT_MARK + JSON.stringify(value === null || typeof value !== 'object' ? value : encode(value))
}

/** The value of a stored text, compact or plain JSON. */
export function unpackJson<T>(text: string): T {
  return (
    text.startsWith(COMPACT_MARK) ? decode(JSON.parse(text.slice(COMPACT_MARK.length))) : JSON.parse(text)
  ) as T
}

/** A stored text as the JSON text it stands for (plain JSON is returned as it is). */
export function jsonText(text: string): string {
  return text.startsWith(COMPACT_MARK) ? JSON.stringify(unpackJson(text)) : text
}
