/**
 * Schema-level rewrites of the generated OpenAPI document, so that TypeBox stays the single source:
 * - a schema whose `title` is a type name (`ScoreResponse`) becomes `components.schemas.ScoreResponse`
 *   and every place it appears a `$ref` to it (the route schemas keep embedding the TypeBox object,
 *   which validation and serialisation need);
 * - the Ajv-only format `ip` becomes the standard `ipv4` or `ipv6`;
 * - a request or answer without an example gets one built from its schema and the examples its fields
 *   carry (the main types carry a whole one in TypeBox `examples`).
 */

export type Json = { [key: string]: unknown }

export const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A title that names a component: a type name, not a sentence. */
const TYPE_NAME = /^[A-Z][A-Za-z0-9]+$/

/** Keys whose values are data, never schemas: left as they are. */
const DATA_KEYS = new Set(['example', 'examples', 'enum', 'default', 'const'])

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`
  if (isJson(v))
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
      .join(',')}}`
  return JSON.stringify(v)
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/**
 * Replaces every titled schema under `node` by a `$ref`, innermost first (so a component refers to the
 * components inside it), and collects the components. Two different schemas under one title are a bug
 * in src/schemas/: it throws, naming the title.
 */
export function hoistNamedSchemas(node: unknown, components: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((n) => hoistNamedSchemas(n, components))
  if (!isJson(node)) return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) out[k] = DATA_KEYS.has(k) ? v : hoistNamedSchemas(v, components)
  const name = out['title']
  if (typeof name !== 'string' || !TYPE_NAME.test(name) || !('type' in out || 'anyOf' in out)) return out
  const { nullable, ...body } = out
  const seen = components[name]
  // @fastify/swagger moves a top-level body's example to its media object, and a parameter's
  // description to the parameter: compare without them, and keep the copy that has them.
  const shape = (s: Json) => stable({ ...s, example: undefined, description: undefined })
  if (seen !== undefined && shape(seen) !== shape(body))
    throw new Error(
      `OpenAPI: two different schemas are titled ${name} (src/schemas/); give one another title`,
    )
  if (seen === undefined || Object.keys(body).length > Object.keys(seen).length) components[name] = body
  // OpenAPI 3.0 ignores siblings of $ref: a nullable use wraps it.
  return nullable === true ? { allOf: [ref(name)], nullable: true } : ref(name)
}

/** `format: ip` (an Ajv format of ours) as the standard formats: an IPv4 or an IPv6 address. */
export function standardFormats(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(standardFormats)
  if (!isJson(node)) return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) out[k] = DATA_KEYS.has(k) ? v : standardFormats(v)
  if (out['format'] === 'ip' && out['type'] === 'string') {
    delete out['format']
    out['anyOf'] = [
      { type: 'string', format: 'ipv4' },
      { type: 'string', format: 'ipv6' },
    ]
  }
  return out
}

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '0b6e4f7c-3d1a-4f5e-9c2b-8a7d6e5f4c3b',
  email: 'ada@example.com',
  ipv4: '203.0.113.7',
  ipv6: '2001:db8::7',
  uri: 'https://example.com/hooks/verdict',
  'date-time': '2026-05-04T10:00:00Z',
}

/** Strings tried, in order, against a pattern no field example covers. */
const PATTERN_TRIES = ['1', 'signup', 'a1', 'ep_0123456789abcdef01234567', 'x']

function sampleString(s: Json): string {
  const format = typeof s['format'] === 'string' ? s['format'] : undefined
  if (format) {
    const sample = FORMAT_SAMPLES[format]
    if (sample === undefined) throw new Error(`OpenAPI examples: no sample for format ${format}`)
    return sample
  }
  if (typeof s['pattern'] === 'string') {
    const re = new RegExp(s['pattern'])
    const hit = PATTERN_TRIES.find((t) => re.test(t))
    if (hit === undefined)
      throw new Error(`OpenAPI examples: give the field of pattern ${s['pattern']} an example`)
    return hit
  }
  const min = typeof s['minLength'] === 'number' ? s['minLength'] : 0
  const max = typeof s['maxLength'] === 'number' ? s['maxLength'] : 64
  return 'text'.padEnd(min, 'x').slice(0, Math.max(min, Math.min(4, max)))
}

function sampleNumber(s: Json): number {
  const min = typeof s['minimum'] === 'number' ? s['minimum'] : Number.NEGATIVE_INFINITY
  const max = typeof s['maximum'] === 'number' ? s['maximum'] : Number.POSITIVE_INFINITY
  return Math.min(Math.max(1, min), max)
}

/**
 * An example value of `schema`: its own example if it has one, else one built from its parts. In a
 * request only required fields and fields with an example of their own are filled (what a caller would
 * send); in an answer every named field is.
 */
export function exampleOf(schema: unknown, components: Record<string, Json>, request: boolean): unknown {
  if (!isJson(schema)) return null
  const target = schema['$ref']
  if (typeof target === 'string') {
    const name = target.replace('#/components/schemas/', '')
    return exampleOf(components[name], components, request)
  }
  if ('example' in schema) return schema['example']
  if (Array.isArray(schema['enum'])) return schema['enum'][0]
  for (const k of ['allOf', 'anyOf', 'oneOf']) {
    const branches = schema[k]
    if (Array.isArray(branches) && branches.length > 0) return exampleOf(branches[0], components, request)
  }
  switch (schema['type']) {
    case 'object': {
      const out: Json = {}
      const required = new Set(Array.isArray(schema['required']) ? schema['required'] : [])
      const props = isJson(schema['properties']) ? schema['properties'] : {}
      for (const [k, sub] of Object.entries(props)) {
        if (request && !required.has(k) && !hasExample(sub, components)) continue
        out[k] = exampleOf(sub, components, request)
      }
      return out
    }
    case 'array': {
      const n = Math.max(1, typeof schema['minItems'] === 'number' ? schema['minItems'] : 0)
      return Array.from({ length: n }, () => exampleOf(schema['items'], components, request))
    }
    case 'string':
      return sampleString(schema)
    case 'integer':
      return Math.ceil(sampleNumber(schema))
    case 'number':
      return sampleNumber(schema)
    case 'boolean':
      return true
    default:
      return null
  }
}

function hasExample(schema: unknown, components: Record<string, Json>): boolean {
  if (!isJson(schema)) return false
  const target = schema['$ref']
  if (typeof target === 'string')
    return hasExample(components[target.replace('#/components/schemas/', '')], components)
  return 'example' in schema
}
