import fc from 'fast-check'
import { BeaconRequest } from '../../src/schemas/beacon.js'
import { DNS_ZONES } from '../helpers/intel.js'
import { deref } from '../helpers/openapi.js'
import type { JsonSchema, Samples } from './schema-arbitrary.js'

/** One operation of the OpenAPI document (plus the beacon, which the document leaves out). */
export interface Operation {
  id: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** `/v1/lists/{id}` */
  path: string
  auth: 'key' | 'optional' | 'none' | 'publishable'
  body: JsonSchema | null
  query: Record<string, { schema: JsonSchema; required: boolean }>
  params: Record<string, JsonSchema>
  /** Whether unknown query parameters are refused (every documented route declares its query). */
  strictQuery: boolean
  /** Statuses a schema-valid request may get: the documented ones, less 400, 401, 429 and 5xx. */
  validStatuses: number[]
  /** Content types besides application/json whose body is read as JSON (the beacon's text/plain). */
  jsonAlso?: string[]
}

interface OpenApiParameter {
  in: 'query' | 'path' | 'header'
  name: string
  required?: boolean
  schema: JsonSchema
}

interface OpenApiOperation {
  security?: unknown[]
  parameters?: OpenApiParameter[]
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, unknown>
}

/**
 * Statuses no schema-valid request with a working key and ample limits may get (403 is a console
 * session's missing CSRF header: the fuzzer sends keys).
 */
const NEVER_FOR_VALID = new Set([400, 401, 403, 413, 415, 429])

/**
 * The document writes the server's `ip` format as the standard ones (`anyOf` ipv4, ipv6): read back as
 * the one format the generators know.
 */
function ipFormat(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(ipFormat)
  if (!node || typeof node !== 'object') return node
  const s = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'example' ? v : ipFormat(v)]))
  const any = s['anyOf'] as { format?: string }[] | undefined
  if (s['type'] === 'string' && any?.map((b) => b.format).join() === 'ipv4,ipv6') {
    const { anyOf: _formats, ...rest } = s
    return { ...rest, format: 'ip' }
  }
  return s
}

/** Routes usable without a key (the document marks them `security: []`; `optional` takes one too). */
const OPTIONAL_KEY = new Set(['GET /v1/ip', 'POST /v1/check'])

/**
 * A tenant rule's condition is a language, not a shape: random text is refused by its compiler, and
 * fast-check's shrinking of such a case over a list of rules took longer than the suite. Rule lists are
 * left out of the generated bodies here and tested where their meaning is known (test/rules/,
 * test/api/custom-rules.test.ts); every other field of these bodies is still fuzzed.
 */
function withoutRules(body: JsonSchema | null): JsonSchema | null {
  if (!body?.properties?.['rules']) return body
  const { rules: _rules, ...properties } = body.properties
  return { ...body, properties }
}

export function operationsOf(served: {
  paths: Record<string, Record<string, OpenApiOperation>>
}): Operation[] {
  const doc = ipFormat(deref(served)) as typeof served
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const method = m.toUpperCase() as Operation['method']
      const id = `${method} ${path}`
      const keyless = Array.isArray(op.security) && op.security.length === 0
      const query: Operation['query'] = {}
      const params: Operation['params'] = {}
      for (const p of op.parameters ?? []) {
        if (p.in === 'query') query[p.name] = { schema: p.schema, required: p.required === true }
        if (p.in === 'path') params[p.name] = p.schema
      }
      out.push({
        id,
        method,
        path,
        auth: keyless ? (OPTIONAL_KEY.has(id) ? 'optional' : 'none') : 'key',
        body: withoutRules(op.requestBody?.content['application/json']?.schema ?? null),
        query,
        params,
        strictQuery: true,
        validStatuses: Object.keys(op.responses)
          .map(Number)
          .filter((s) => s < 500 && !NEVER_FOR_VALID.has(s)),
      })
    }
  }
  return out
}

/** POST /v1/beacon is hidden from the document (only the browser library calls it): its schema is the source's. */
export const BEACON: Operation = {
  id: 'POST /v1/beacon',
  method: 'POST',
  path: '/v1/beacon',
  auth: 'publishable',
  body: JSON.parse(JSON.stringify(BeaconRequest)) as JsonSchema,
  query: {},
  params: {},
  strictQuery: false,
  validStatuses: [200],
  jsonAlso: ['text/plain'],
}

/** Mail domains the loopback DNS answers at once (not the silent or failing zones). */
/** No string may hold NUL (refused on both engines); samples of free text leave it out. */
const noNul = (s: string) => !s.includes('\u0000')

const MAIL_DOMAINS = Object.keys(DNS_ZONES).filter((d) => !d.startsWith('slow.') && !d.startsWith('broken.'))

const email = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9.+_-]{0,20}$/),
    fc.constantFrom(...MAIL_DOMAINS, 'gmail.com', 'nx-domain.invalid'),
  )
  .map(([l, d]) => `${l}@${d}`)
  .filter((e) => !e.includes('.@') && !e.includes('..'))

const ip = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.constantFrom('127.0.0.1', '::1', '8.8.8.8', '2001:db8::1', '0.0.0.0', '::ffff:1.2.3.4', '185.220.101.1'),
)

/** A CIDR range with its host bits cleared (the service refuses others, naming the range meant). */
const cidr = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 8, max: 32 })).map(([n, len]) => {
    const net = len === 32 ? n >>> 0 : ((n >>> (32 - len)) << (32 - len)) >>> 0
    return `${net >>> 24}.${(net >>> 16) & 255}.${(net >>> 8) & 255}.${net & 255}/${len}`
  }),
  fc.constantFrom('2001:db8::/32', '2001:db8:1:2::/64', 'fd00::/16', '2001:db8::1/128'),
)

/** Numbers in international form that libphonenumber takes as valid. */
const phone = fc.constantFrom('+442079460958', '+1 415 555 0123', '0049 30 901820', '+33 1 42 68 53 00')

const digitsIn = (min: number, max: number) => fc.integer({ min, max }).map(String)

/**
 * Known-good samples, by field name (`name:format` first): where the service checks more than the
 * schema says (an IP must parse, a list value must fit its type, query numbers have bounds), valid
 * requests draw from these; free-text fields get arbitrary Unicode instead.
 */
export const SAMPLES: Samples = {
  'ip:ip': ip,
  'email:email': email,
  'ip:': fc.oneof(ip, fc.string({ maxLength: 45 }).filter(noNul)),
  'email:': fc.oneof(email, fc.string({ maxLength: 320 }).filter(noNul)),
  'phone:': fc.oneof(
    fc.constantFrom('+14155552671', '+442071838750', '4155552671', '+4915112345678'),
    fc.string().filter(noNul),
  ),
  'limit:': digitsIn(1, 200),
  // GET /v1/events takes offsets up to 1,000 (deeper pages use its `before` cursor).
  'offset:': digitsIn(0, 1000),
  'hours:': digitsIn(1, 87_600),
  'window_hours:': digitsIn(1, 8760),
  'id:': fc.oneof(digitsIn(1, 50), fc.stringMatching(/^\d{1,12}$/)),
  'webhookId:': fc.oneof(fc.stringMatching(/^ep_[0-9a-f]{24}$/), fc.string({ maxLength: 40 }).filter(noNul)),
  'device_id:': fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 256 }).filter(noNul)),
  // A tenant rule's condition: CEL that compiles, or arbitrary text the compiler refuses (SERVICE_REFUSALS).
  'when:': fc.oneof(
    fc.constantFrom(
      'true',
      "event.name == 'checkout'",
      "'datacenter_ip' in reasons && score > 50",
      'has(event.attributes.amount) && event.attributes.amount > 500',
      'device.accounts >= 3 || velocity.ip_accounts > 5',
    ),
    fc.string({ maxLength: 200 }).filter(noNul),
  ),
}

/**
 * Schema-valid requests the service itself refuses with 400, by operation: checks the schema cannot
 * express (one field's meaning depends on another, or a query number's range). The answer must still
 * name the field, and nothing is written. Anything else that is schema-valid must not get a 400.
 */
export const SERVICE_REFUSALS: Record<string, RegExp[]> = {
  // A rule that does not compile (or repeats an id) names the rule: rules[i] (id): problem.
  // More than 5 counted attributes (docs/rules.md) is a service bound.
  'PUT /v1/config': [
    /^thresholds\.\w+ \(.*\) must not exceed thresholds\.\w+/,
    /^rules\[\d+\]/,
    /^attributes: at most 5 counted attributes/,
  ],
  'POST /v1/config/simulate': [
    /^thresholds\.\w+ \(.*\) must not exceed thresholds\.\w+/,
    /^body\.since_ms must not be after body\.until_ms$/,
    /^rules\[\d+\]/,
  ],
  'POST /v1/lists': [/^body\.value: /, /^body\.expires_ms must be in the future$/],
  // The keyset cursor must name an event of the tenant; a generated id names none.
  'GET /v1/events': [/^query\.before names no event of this tenant$/],
  'POST /v1/batch/lists': [
    /^body\.rows\[\d+\]\.value: /,
    /^body\.rows\[\d+\]\.expires_ms must be in the future$/,
  ],
  'POST /v1/label': [
    /^send event_id, user_id, entities or a combination$/,
    /^body\.entities\.(ip|email) is not a valid/,
  ],
  'POST /v1/subject': [
    /^send at least one of email, phone, ip, device_id, user_id$/,
    /^body\.ip is not a valid/,
  ],
  'POST /v1/forget': [
    /^send at least one of email, phone, ip, device_id, user_id$/,
    /^body\.ip is not a valid/,
  ],
  'POST /v1/check': [/^body must contain email, ip or both$/],
  'POST /v1/webhooks': [/^body\.url /],
  'PATCH /v1/webhooks/{webhookId}': [/^body\.url /],
}

/** Query numbers out of the route's range: schema-valid digit strings the route refuses, naming them. */
export const QUERY_RANGE_REFUSALS = ['0', '99999999', '999999999999']

/** A list row's value made to fit its type (an IP or range for `ip`, an address for `email`, a number for `phone`). */
function fitRow(row: unknown): fc.Arbitrary<unknown> {
  // An expiry must lie in the future (a service refusal otherwise): a fitted row has none.
  const { expires_ms: _expiry, ...r } = row as { type?: string; value?: string; expires_ms?: number }
  if (r.type === 'ip') return fc.oneof(ip, cidr).map((value) => ({ ...r, value }))
  if (r.type === 'phone') return phone.map((value) => ({ ...r, value }))
  if (r.type === 'email') return email.map((value) => ({ ...r, value }))
  return fc.constant(r)
}

/**
 * Where one field's meaning depends on another, half the valid bodies are made to fit, so that the
 * write path is reached as often as the service's own refusal (SERVICE_REFUSALS).
 */
export const FIT: Record<string, (body: unknown) => fc.Arbitrary<unknown>> = {
  'POST /v1/lists': fitRow,
  // A public address literal: the endpoint is created (no DNS is asked in the fuzz app).
  'POST /v1/webhooks': (body) => fc.constant({ ...(body as object), url: 'https://93.184.216.34/hook' }),
  'POST /v1/batch/lists': (body) => {
    const rows = (body as { rows: unknown[] }).rows
    return fc.tuple(...rows.map(fitRow)).map((fitted) => ({ ...(body as object), rows: fitted }))
  },
}
