import { ERROR_STATUS, type ErrorCode } from '../errors.js'
import { exampleOf, hoistNamedSchemas, isJson, type Json, ref, standardFormats } from './openapi-schemas.js'

/**
 * The finishing pass over the document @fastify/swagger generates from the routes: what a client
 * generator and the linters (`npm run lint:openapi`) need and a route schema cannot say by itself.
 * Errors, headers and statuses every route shares are declared once here, from how the server behaves
 * (plugins/guard.ts, errors.ts, http-conventions.ts), not per route.
 */

export const TAGS: { name: string; description: string }[] = [
  { name: 'score', description: 'Score events: the score, verdict, reason codes and evidence' },
  { name: 'checks', description: 'Judge one email address, IP address or phone number' },
  { name: 'events', description: 'Scored events, their statistics and the usage of the month' },
  { name: 'labels', description: 'Real outcomes, replays and how each rule performs against them' },
  { name: 'lists', description: 'Allow and block lists' },
  { name: 'config', description: 'Weights, thresholds and rules of the tenant, with their versions' },
  { name: 'privacy', description: 'Access and erasure requests, and their audit' },
  { name: 'devices', description: 'What was observed for a device' },
  {
    name: 'webhooks',
    description: 'Endpoints that receive signed event notifications, and their deliveries',
  },
  { name: 'batch', description: 'Up to 1000 rows in one request' },
  { name: 'service', description: 'Health, the caller’s address and usage' },
]

const integer = { type: 'integer', minimum: 0 }

/** Response headers, by component name. */
const HEADERS: Record<string, Json> = {
  RequestId: {
    description:
      'the id of this request in the server log (an incoming X-Request-Id or traceparent is honoured)',
    schema: { type: 'string', example: 'req_5f0c3a9e1b2d4c6a' },
  },
  RateLimitLimit: { description: 'requests allowed per minute', schema: integer },
  RateLimitRemaining: { description: 'requests left in the current minute', schema: integer },
  RateLimitReset: { description: 'seconds until the budget is whole again', schema: integer },
  RetryAfter: { description: 'seconds to wait before retrying', schema: integer },
  QuotaLimit: { description: 'metered units allowed this month', schema: integer },
  QuotaRemaining: { description: 'metered units left this month', schema: integer },
  QuotaReset: { description: 'seconds until the month (UTC) ends', schema: integer },
  IdempotentReplayed: {
    description:
      '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  WwwAuthenticate: {
    description: 'the scheme that would work: a key as a bearer token',
    schema: { type: 'string' },
  },
}
const header = (name: string) => ({ $ref: `#/components/headers/${name}` })

const RATE_LIMIT = {
  'RateLimit-Limit': header('RateLimitLimit'),
  'RateLimit-Remaining': header('RateLimitRemaining'),
  'RateLimit-Reset': header('RateLimitReset'),
}
const QUOTA = {
  'Quota-Limit': header('QuotaLimit'),
  'Quota-Remaining': header('QuotaRemaining'),
  'Quota-Reset': header('QuotaReset'),
}

/** The shared error answers: status, component name, what it means, the code of its example, extra headers. */
const ERRORS: [number, string, string, ErrorCode, Json][] = [
  [400, 'BadRequest', 'The request is invalid; the message names the field', 'bad_request', {}],
  [
    401,
    'Unauthorized',
    'No key, an unknown or revoked key, or a key of the wrong kind',
    'unauthorized',
    { 'WWW-Authenticate': header('WwwAuthenticate') },
  ],
  [403, 'Forbidden', 'A console session without its CSRF header', 'forbidden', {}],
  [404, 'NotFound', 'No such resource for this tenant', 'not_found', {}],
  [409, 'Conflict', 'The resource is in a state that refuses this request', 'conflict', {}],
  [413, 'PayloadTooLarge', 'The body is larger than the server accepts', 'payload_too_large', {}],
  [415, 'UnsupportedMediaType', 'The body is not sent as application/json', 'unsupported_media_type', {}],
  [422, 'Unprocessable', 'An Idempotency-Key reused with another body', 'unprocessable', {}],
  [
    429,
    'TooManyRequests',
    'The rate limit or the monthly quota is spent (`rate_limited` or `quota_exceeded`)',
    'rate_limited',
    { 'Retry-After': header('RetryAfter'), ...RATE_LIMIT },
  ],
  [500, 'InternalError', 'A failure of the server; the message carries only the request id', 'internal', {}],
  [
    503,
    'Unavailable',
    'Overloaded, or storage briefly unavailable: nothing was written; retry after Retry-After',
    'unavailable',
    { 'Retry-After': header('RetryAfter') },
  ],
]

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  bad_request: 'body.event must NOT have fewer than 1 characters',
  unauthorized: 'missing API key: send it in the x-api-key header or as Authorization: Bearer',
  rate_limited: 'rate limit of 600 requests per minute exceeded; retry later',
  unsupported_media_type:
    'unsupported content type "text/plain": send a JSON body with Content-Type: application/json',
}

function errorResponses(): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const [status, name, description, code, headers] of ERRORS) {
    if (ERROR_STATUS[code] !== status) throw new Error(`OpenAPI: ${code} is not ${status}`)
    out[name] = {
      description,
      headers: { 'X-Request-Id': header('RequestId'), ...headers },
      content: {
        'application/json': {
          schema: ref('ErrorBody'),
          example: {
            error: MESSAGES[code] ?? description.split(';')[0],
            code,
            request_id: 'req_5f0c3a9e1b2d4c6a',
          },
        },
      },
    }
  }
  return out
}

const UNSAFE = new Set(['post', 'put', 'patch', 'delete'])

/**
 * The statuses an operation can answer besides its own: every route is rate limited and may be
 * overloaded; a keyed one refuses a bad key, and a console session without CSRF on a write; a body
 * can be too large or of the wrong type.
 */
function sharedStatuses(method: string, op: Json): number[] {
  const keyless = Array.isArray(op['security']) && op['security'].length === 0
  const out = [400, 429, 500, 503]
  if (!keyless) out.push(401)
  if (!keyless && UNSAFE.has(method)) out.push(403)
  if (op['requestBody']) out.push(413, 415)
  return out
}

function finishOperation(method: string, op: Json, components: Record<string, Json>): void {
  const responses = isJson(op['responses']) ? op['responses'] : {}
  const keyless = Array.isArray(op['security']) && op['security'].length === 0
  const params = Array.isArray(op['parameters']) ? op['parameters'] : []
  const idempotent = params.some((p) => isJson(p) && p['in'] === 'header' && p['name'] === 'idempotency-key')
  const statuses = new Set([...Object.keys(responses).map(Number), ...sharedStatuses(method, op)])
  const out: Json = {}
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const shared = ERRORS.find(([s]) => s === status)
    if (status >= 400) {
      if (!shared) throw new Error(`OpenAPI: no shared answer for status ${status}`)
      out[String(status)] = { $ref: `#/components/responses/${shared[1]}` }
      continue
    }
    const answer = responses[String(status)]
    if (!isJson(answer)) continue
    // @fastify/swagger's placeholder: say what a 2xx is instead.
    if (answer['description'] === 'Default Response') answer['description'] = 'Success'
    answer['headers'] = {
      'X-Request-Id': header('RequestId'),
      ...RATE_LIMIT,
      ...(keyless ? {} : QUOTA),
      ...(idempotent ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {}),
      ...(isJson(answer['headers']) ? answer['headers'] : {}),
    }
    addExample(answer, components, false)
    out[String(status)] = answer
  }
  op['responses'] = out
  if (isJson(op['requestBody'])) addExample(op['requestBody'], components, true)
}

function addExample(holder: Json, components: Record<string, Json>, request: boolean): void {
  const content = isJson(holder['content']) ? holder['content'] : {}
  for (const media of Object.values(content)) {
    if (!isJson(media) || 'example' in media || 'examples' in media) continue
    media['example'] = exampleOf(media['schema'], components, request)
  }
}

/** The document as served: info, servers and tags completed; schemas named; shared answers declared. */
export function finishDocument(generated: Json, version: string): Json {
  const schemas: Record<string, Json> = {}
  const paths = hoistNamedSchemas(standardFormats(generated['paths']), schemas) as Record<string, Json>
  if (!schemas['ErrorBody']) throw new Error('OpenAPI: no route declares the ErrorBody answer')
  for (const ops of Object.values(paths))
    for (const [method, op] of Object.entries(ops)) if (isJson(op)) finishOperation(method, op, schemas)
  const components = isJson(generated['components']) ? generated['components'] : {}
  const info = isJson(generated['info']) ? generated['info'] : {}
  return {
    ...generated,
    info: {
      ...info,
      description: `Fraud and abuse scoring API (server ${version}). Errors are always the ErrorBody object; every answer carries X-Request-Id.`,
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      contact: { name: 'verdict' },
    },
    servers: [{ url: '/', description: 'the verdict that serves this document' }],
    tags: TAGS,
    paths,
    components: {
      ...components,
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses: errorResponses(),
      headers: HEADERS,
    },
  }
}
