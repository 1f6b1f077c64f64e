import type { FastifyError, FastifyInstance, FastifySchemaValidationError } from 'fastify'
import { ApiError } from '../errors.js'
import { StorageUnavailable } from '../store/db.js'

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

/** The one error handler: every error answers `{ error }`; server-side failures are masked and logged. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError | StorageUnavailable, request, reply) => {
    if (err instanceof ApiError) {
      return reply.code(err.status).headers(err.headers).send({ error: err.message })
    }
    if (err instanceof StorageUnavailable) {
      // Locked by another process, restarting, full or read-only: nothing was written; retry shortly.
      request.log.warn({ reqId: request.id, reason: err.message }, 'storage unavailable')
      return reply
        .code(503)
        .header('Retry-After', String(err.retryAfterSeconds))
        .send({ error: 'storage is temporarily unavailable; retry shortly' })
    }
    if ('validation' in err && err.validation) {
      return reply.code(400).send({ error: err.message })
    }
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (bad JSON, body too large, wrong content type) are safe to show.
      const known = 'code' in err && typeof err.code === 'string' && SAFE_CLIENT_CODES.has(err.code)
      const message = err.message.startsWith('Body is not valid JSON') || known ? err.message : 'bad request'
      return reply.code(status).send({ error: status === 413 ? 'request body is too large' : message })
    }
    request.log.error({ err, reqId: request.id }, 'unhandled error')
    return reply.code(500).send({ error: `internal error (request id ${request.id})` })
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]
    reply.code(404).send({ error: `no route for ${request.method} ${path}` })
  })
}
