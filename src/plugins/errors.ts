import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchemaValidationError,
} from 'fastify'
import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors.js'
import { StorageUnavailable } from '../store/engine/db.js'
import { randomBytesPooled } from '../util/random.js'
import { allowedMethods } from './http-conventions.js'

type SchemaContext = 'body' | 'querystring' | 'params' | 'headers'

/** `/rows/3/event` under `body` → `body.rows[3].event`. */
function fieldPath(context: string, instancePath: string): string {
  let out = context === 'querystring' ? 'query' : context
  for (const part of instancePath.split('/').slice(1)) {
    const seg = part.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`
  }
  return out
}

/** The patterns our schemas use, in words: a caller should never have to read a regular expression. */
const PATTERN_WORDS: Record<string, string> = {
  '^\\d+$': 'a string of digits',
  '^\\d{1,16}$': 'a string of at most 16 digits (milliseconds since the epoch)',
  '^[a-z0-9_]{1,64}$': 'a reason code: lower-case letters, digits and underscores, at most 64',
  '^[0-9a-f]{64}$': '64 lower-case hexadecimal characters',
  '^[\\x21-\\x7e]+$': 'printable ASCII characters without spaces',
}

function describePattern(pattern: string): string {
  return PATTERN_WORDS[pattern] ?? 'in the format the API reference (/docs) describes'
}

/** Turns the first Ajv error into a message that names the offending field. */
export function formatValidation(errors: FastifySchemaValidationError[], context: SchemaContext): Error {
  const e = errors[0]
  if (!e) return new Error(`${context} is invalid`)
  const where = fieldPath(context, e.instancePath)
  const p = e.params as Record<string, unknown>
  let message: string
  if (e.keyword === 'required') message = `${where}.${String(p['missingProperty'])} is required`
  else if (e.keyword === 'additionalProperties')
    message = `${where}.${String(p['additionalProperty'])} is not an allowed field`
  else if (e.keyword === 'enum')
    message = `${where} must be one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
  else if (e.keyword === 'pattern') message = `${where} must be ${describePattern(String(p['pattern']))}`
  else if (e.keyword === 'format') message = `${where} must be a valid ${String(p['format'])}`
  else message = `${where} ${e.message ?? 'is invalid'}`
  return new Error(message)
}

const SAFE_CLIENT_CODES = new Set([
  'FST_ERR_CTP_BODY_TOO_LARGE',
  'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_VALIDATION',
])

/** The code of a client-error status Fastify or a plugin answered with; any other 4xx is a bad request. */
const CLIENT_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

/**
 * Request ids are random rather than Fastify's per-process counter: unique across restarts and
 * processes, so a logged id names one request, and a client learns nothing about the server's traffic.
 */
export function newRequestId(): string {
  return `req_${randomBytesPooled(8).toString('hex')}`
}

/**
 * Every error answer: `{ error, code, request_id }` with the status of the code, and the same id in
 * `x-request-id` (which every answer carries, see plugins/observability.ts).
 */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
): FastifyReply {
  // RFC 9110: a 401 names the scheme that would work (a key as a bearer token, or in x-api-key).
  if (code === 'unauthorized') reply.header('WWW-Authenticate', 'Bearer realm="verdict", charset="UTF-8"')
  return reply
    .code(ERROR_STATUS[code])
    .header('x-request-id', request.id)
    .send({ error: message, code, request_id: request.id })
}

/**
 * Errors Fastify raises before a route is chosen (a malformed percent-encoding, a path parameter past
 * the router's 1024 characters), which would otherwise bypass the error handler. Passed to Fastify as
 * `frameworkErrors`.
 */
export function answerFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_BAD_URL')
    sendError(request, reply, 'bad_request', 'the URL is not validly encoded')
  else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    sendError(request, reply, 'bad_request', 'a path parameter is longer than 1024 characters')
  else {
    request.log.error({ err, reqId: request.id }, 'framework error')
    sendError(request, reply, 'internal', `internal error (request id ${request.id})`)
  }
}

/** The one error handler: every error answers `{ error, code, request_id }`; server-side failures are masked and logged. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError | StorageUnavailable, request, reply) => {
    if (err instanceof ApiError) {
      reply.headers(err.headers)
      return sendError(request, reply, err.code, err.message)
    }
    if (err instanceof StorageUnavailable) {
      // Locked by another process, restarting, full or read-only: nothing was written; retry shortly.
      request.log.warn({ reqId: request.id, reason: err.message }, 'storage unavailable')
      reply.header('Retry-After', String(err.retryAfterSeconds))
      return sendError(request, reply, 'unavailable', 'storage is temporarily unavailable; retry shortly')
    }
    if ('validation' in err && err.validation) {
      return sendError(request, reply, 'bad_request', err.message)
    }
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (bad JSON, body too large, wrong content type) are safe to show.
      const known = 'code' in err && typeof err.code === 'string' && SAFE_CLIENT_CODES.has(err.code)
      const message = err.message.startsWith('Body is not valid JSON') || known ? err.message : 'bad request'
      const code = CLIENT_STATUS_CODES[status] ?? 'bad_request'
      if (code === 'unsupported_media_type') {
        const sent = request.headers['content-type'] ?? '(none)'
        return sendError(
          request,
          reply,
          code,
          `unsupported content type ${JSON.stringify(sent)}: send a JSON body with Content-Type: application/json`,
        )
      }
      return sendError(
        request,
        reply,
        code,
        code === 'payload_too_large' ? 'request body is too large' : message,
      )
    }
    request.log.error({ err, reqId: request.id }, 'unhandled error')
    return sendError(request, reply, 'internal', `internal error (request id ${request.id})`)
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? ''
    const allow = allowedMethods(app, path)
    if (allow.length > 0) {
      reply.header('Allow', allow.join(', '))
      return sendError(
        request,
        reply,
        'method_not_allowed',
        `${request.method} is not allowed on ${path}; use ${allow.join(' or ')}`,
      )
    }
    sendError(request, reply, 'not_found', `no route for ${request.method} ${path}`)
  })
}
