import fc from 'fast-check'

/**
 * JSON Schema (the subset the OpenAPI document uses) → fast-check arbitraries: valid values that honour
 * type, required, enum, pattern, format, lengths, bounds, `anyOf`, `patternProperties` and
 * `additionalProperties: false`, and single
 * mutations of a valid value that break exactly one rule and know which field the answer must name.
 */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean'
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean
  items?: JsonSchema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  enum?: unknown[]
  minimum?: number
  maximum?: number
  nullable?: boolean
  /** Alternatives (a rule's `then`): a valid value is one of them. */
  anyOf?: JsonSchema[]
  /** Keys of a record (event attributes) that the pattern allows beside the named properties. */
  patternProperties?: Record<string, JsonSchema>
}

/** A JSON number written out verbatim (very long digit strings), since JavaScript numbers cannot hold it. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold RawNumber leaves. */
export function toJson(value: unknown): string {
  const raws: string[] = []
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RawNumber) {
      raws.push(v.text)
      return `\u0001RAW${raws.length - 1}\u0001`
    }
    return v
  })
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)] ?? 'null')
}

/** Field samples known to pass the service's own checks, keyed by a field's name (any depth). */
export type Samples = Record<string, fc.Arbitrary<string>>

/**
 * Characters every free-text field is fed: plain ASCII, control characters (not NUL, which no string
 * may hold: it is an invalid case below), a lone high surrogate,
 * RTL/LTR marks and overrides, zero-width joiners, a BOM, combining marks, and 4-byte emoji.
 * Each unit is one code point, so a string of n units has length n as JSON Schema counts it.
 */
const EDGE_UNITS = [
  '\u0001',
  '\u001f',
  '\u007f',
  '\ud800',
  '\u200f',
  '\u202e',
  '\u200d',
  '\ufeff',
  '\u0301',
  '\u2028',
  '😀',
  '𝕏',
  '👩',
  '"',
  '\\',
  '%',
  "'",
  '<',
  ' ',
]
export const unit: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...EDGE_UNITS) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((u) => u !== '\u0000'),
  },
)

/** Code points long strings are built from: printable ASCII, the edge units, and a few other scripts. */
const POOL: string[] = [
  ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
  ...EDGE_UNITS,
  ...EDGE_UNITS,
  'é',
  'ß',
  'Ж',
  'ע',
  'ب',
  '中',
  '한',
  '\u{10FFFF}',
  '\u{1F3F3}',
]

/** n code points drawn from POOL by a small PRNG (mulberry32) seeded by fast-check, so runs replay. */
function pooled(seed: number, n: number): string {
  let a = seed >>> 0
  let out = ''
  for (let k = 0; k < n; k++) {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    out += POOL[((t ^ (t >>> 14)) >>> 0) % POOL.length]
  }
  return out
}

/**
 * A string of exactly n code points (n at the bounds more often than not). Short ones are arrays of
 * `unit`, which shrink well; long ones are built from one seed, since drawing hundreds of units per
 * field made generation cost more than the request it fed.
 */
function textOf(min: number, max: number): fc.Arbitrary<string> {
  const cap = Math.min(max, min + 600)
  const len = fc.oneof(fc.constant(min), fc.constant(cap), fc.integer({ min, max: cap }))
  return len.chain((n) =>
    n <= 16
      ? fc.array(unit, { minLength: n, maxLength: n }).map((u) => u.join(''))
      : fc.integer().map((seed) => pooled(seed, n)),
  )
}

/** Length as Ajv counts it (code points; a surrogate pair is one). */
export const cpLength = (s: string) => [...s].length

function stringArb(s: JsonSchema, name: string, samples: Samples): fc.Arbitrary<string> {
  const min = s.minLength ?? 0
  const max = s.maxLength ?? 4096
  const fits = (v: string) => cpLength(v) >= min && cpLength(v) <= max
  const re = s.pattern ? new RegExp(s.pattern) : null
  const sample = samples[`${name}:${s.format ?? ''}`] ?? (s.format ? undefined : samples[name])
  if (sample) return sample.filter((v) => fits(v) && (!re || re.test(v)))
  if (re) return fc.stringMatching(re).filter(fits)
  if (s.format) throw new Error(`no sample for format ${s.format} (field ${name}); add one`)
  return textOf(min, max)
}

function numberArb(s: JsonSchema): fc.Arbitrary<number | RawNumber> {
  const min = s.minimum ?? -1e9
  const max = s.maximum ?? 1e9
  if (s.type === 'integer') {
    return fc.oneof(
      fc.constantFrom(min, max),
      fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
      // JSON numbers the parser rounds to an integer in range.
      fc.constant(new RawNumber(`${Math.floor(max)}.${'0'.repeat(40)}`)),
    )
  }
  return fc.oneof(
    fc.constantFrom(min, max),
    fc.double({ min, max, noNaN: true, noDefaultInfinity: true }),
    fc.constant(new RawNumber(`${min}.${'0'.repeat(300)}1`)),
    fc.constant(new RawNumber(`${min}e-400`)),
  )
}

/** Valid values of `schema`; `name` is the field's own name, for the samples. */
export function validArb(schema: JsonSchema, samples: Samples, name = ''): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => validArb(s, samples, name)))
  switch (schema.type) {
    case 'string':
      return stringArb(schema, name, samples)
    case 'number':
    case 'integer':
      return numberArb(schema)
    case 'boolean':
      return fc.boolean()
    case 'array': {
      const min = schema.minItems ?? 0
      const max = Math.min(schema.maxItems ?? 5, min + 5)
      const items = validArb(schema.items ?? {}, samples, name)
      return fc.array(items, { minLength: min, maxLength: max })
    }
    case 'object': {
      const props = schema.properties ?? {}
      const required = new Set(schema.required ?? [])
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, sub] of Object.entries(props)) record[k] = validArb(sub, samples, k)
      return fc.record(record, { requiredKeys: [...required] })
    }
    default:
      return fc.constant(null)
  }
}

/** What an invalid request must be refused for: the field the error names, and how it was broken. */
export interface Broken {
  value: unknown
  field: string
  how: string
}

/** `rows`, 3 → `rows[3]`; `device`, `flag` → `device.flag`. */
const join = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`

/** Values of the wrong JSON type for `s`. */
function wrongTypes(s: JsonSchema): unknown[] {
  const all: unknown[] = [
    'text',
    '',
    42,
    -0.5,
    new RawNumber(`9${'9'.repeat(400)}`),
    true,
    null,
    [],
    ['x'],
    {},
    { a: 1 },
  ]
  const t = s.type
  return all.filter((v) => {
    if (v === null) return !s.nullable
    if (v instanceof RawNumber) return t !== 'number' && t !== 'integer'
    if (typeof v === 'string') return t !== 'string'
    if (typeof v === 'number') return t !== 'number' && !(t === 'integer' && Number.isInteger(v))
    if (typeof v === 'boolean') return t !== 'boolean'
    if (Array.isArray(v)) return t !== 'array'
    return t !== 'object'
  })
}

/** Strings that break the schema's own rules (enum, pattern, format, length). */
function badStrings(s: JsonSchema): { v: string; how: string }[] {
  // PostgreSQL text cannot hold NUL, so the API refuses it in every string on both engines.
  const out: { v: string; how: string }[] = [
    { v: 'a\u0000b', how: 'NUL' },
    { v: '\u0000', how: 'NUL' },
  ]
  if (s.enum) {
    const first = String(s.enum[0])
    for (const v of ['', first.toUpperCase(), ` ${first}`, `${first}\u0000`, `${first}\u200f`, 'nope'])
      if (!s.enum.includes(v)) out.push({ v, how: 'enum' })
  }
  if (s.pattern) {
    const re = new RegExp(s.pattern)
    for (const v of ['', '-1', '1.5', '12a', '１２', '١٢', ' 7', '7\n', 'x'.repeat(3)])
      if (!re.test(v)) out.push({ v, how: 'pattern' })
  }
  if (s.format === 'ip')
    for (const v of ['999.1.1.1', '1.2.3', 'localhost', '::g']) out.push({ v, how: 'format' })
  if (s.format === 'email') for (const v of ['no-at-sign', 'a@', '@b.example']) out.push({ v, how: 'format' })
  if (s.maxLength !== undefined) {
    out.push({ v: 'a'.repeat(s.maxLength + 1), how: 'maxLength' })
    out.push({ v: '😀'.repeat(s.maxLength + 1), how: 'maxLength (emoji)' })
    out.push({ v: '9'.repeat(s.maxLength + 5000), how: 'maxLength (far)' })
  }
  if (s.minLength !== undefined && s.minLength > 0) {
    out.push({ v: 'a'.repeat(s.minLength - 1), how: 'minLength' })
    if (s.minLength > 1) out.push({ v: '', how: 'empty' })
  }
  return out
}

function badNumbers(s: JsonSchema): { v: unknown; how: string }[] {
  const out: { v: unknown; how: string }[] = []
  if (s.minimum !== undefined) {
    out.push({ v: s.minimum - 1, how: 'minimum' })
    out.push({ v: new RawNumber(`-1${'0'.repeat(400)}`), how: 'minimum (huge)' })
  }
  if (s.maximum !== undefined) {
    out.push({ v: s.maximum + 0.5, how: 'maximum' })
    out.push({ v: new RawNumber(`1${'0'.repeat(400)}`), how: 'maximum (overflows to Infinity)' })
  }
  if (s.type === 'integer') out.push({ v: (s.minimum ?? 0) + 0.5, how: 'integer' })
  return out
}

/**
 * Every way to break `value` (valid for `schema`) at one place, at every depth: wrong type, a missing
 * required field, an unknown field, each bound crossed. Each names the field the answer must name.
 */
export function breakages(schema: JsonSchema, value: unknown, path: string): Broken[] {
  const out: Broken[] = []
  const here = (v: unknown, how: string, field = path) => out.push({ value: v, field, how })
  for (const w of wrongTypes(schema)) here(w, 'wrong type')
  if (schema.type === 'string' || schema.enum) for (const b of badStrings(schema)) here(b.v, b.how)
  if (schema.type === 'number' || schema.type === 'integer')
    for (const b of badNumbers(schema)) here(b.v, b.how)
  if (schema.type === 'array' && Array.isArray(value)) {
    if (schema.minItems) here([], 'minItems')
    if (schema.maxItems !== undefined && value.length > 0)
      here(
        Array.from({ length: schema.maxItems + 1 }, (_, i) => value[i % value.length]),
        'maxItems',
      )
    // The first and the last item (rows are random, so that is any row; breaking each would cost
    // more to generate than to send).
    const ends = value.length > 1 ? [0, value.length - 1] : value.length === 1 ? [0] : []
    ends.forEach((i) => {
      const item = value[i]
      for (const b of breakages(schema.items ?? {}, item, join(path, i))) {
        const copy = [...value]
        copy[i] = b.value
        out.push({ ...b, value: copy })
      }
    })
  }
  if (schema.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>
    for (const k of schema.required ?? []) {
      const { [k]: _gone, ...rest } = obj
      here(rest, 'missing required', join(path, k))
    }
    if (schema.additionalProperties === false) {
      // A key a pattern allows (a record's own keys) is not unknown.
      const patterns = Object.keys(schema.patternProperties ?? {}).map((p) => new RegExp(p))
      for (const k of ['unknown', '__proto__x', 'constructor', 'Event', 'x\u0000', '😀', ''])
        if (!(k in (schema.properties ?? {})) && !patterns.some((re) => re.test(k)))
          here({ ...obj, [k]: 1 }, 'unknown field', join(path, k))
    }
    for (const [k, sub] of Object.entries(schema.properties ?? {})) {
      // Absent optional fields are broken by sending them with a bad value.
      const present = k in obj ? obj[k] : undefined
      for (const b of breakages(sub, present, join(path, k))) {
        if (b.value === undefined) continue
        out.push({ ...b, value: { ...obj, [k]: b.value } })
      }
    }
  }
  return out
}
