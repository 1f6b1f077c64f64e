import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Metrics } from '../observability/metrics.js'
import type { Span, Tracing } from '../observability/tracing.js'
import { newRequestId } from './errors.js'

/** A caller's request id is kept when it is short and plain: it ends up in logs and headers. */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
/** W3C trace context, version 00: the trace id is logged, so a log line can be found from a trace. */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * The request id: the caller's `X-Request-Id` when it is plain (letters, digits, `._:-`, at most 128),
 * so one id follows a request through the caller's systems and ours; otherwise a random one.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && CALLER_REQUEST_ID.test(given) ? given : newRequestId()
}

/** The route pattern (never the URL, which may carry identifiers) or `unmatched`. */
const routeOf = (request: FastifyRequest) => request.routeOptions.url ?? 'unmatched'

declare module 'fastify' {
  interface FastifyRequest {
    /** The error that produced a 5xx, for its log line. */
    failure: Error | null
    /** The server span, when tracing is on. */
    traceSpan: Span | null
  }
}

export interface ObservabilityOptions {
  metrics?: Metrics | undefined
  tracing?: Tracing | undefined
}

/**
 * One log line per request (info; 5xx at error with the error's stack): method, route pattern, status,
 * duration, request id, tenant id and the caller's trace id. Never the URL, the body, an address or a
 * key. The request id goes back on every response. With metrics, every answer is counted by route,
 * method and status; with tracing, each request is a server span continuing the caller's
 * `traceparent`, and the rest of the request (hooks, body, handler) runs inside that span's context. Registered before the guard, so refusals
 * (401, 429, 503) are logged and counted too.
 */
export function registerObservability(app: FastifyInstance, opts: ObservabilityOptions): void {
  const { metrics, tracing } = opts
  app.decorateRequest('failure', null)
  app.decorateRequest('traceSpan', null)

  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id)
    done(null, payload)
  })
  app.addHook('onError', (request, _reply, err, done) => {
    request.failure = err
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode
    const route = routeOf(request)
    const method = METHODS.has(request.method) ? request.method : 'OTHER'
    metrics?.request(method, route, status, reply.elapsedTime / 1000)
    if (request.traceSpan) tracing?.endRequest(request.traceSpan, status)
    logRequest(request, reply, method, route, status)
    done()
  })

  if (!tracing) return
  app.addHook('onRequest', (request, _reply, done) => {
    const { span, ctx } = tracing.startRequest(request.headers, `${request.method} ${routeOf(request)}`)
    span.setAttribute('http.request.method', request.method)
    span.setAttribute('http.route', routeOf(request))
    span.setAttribute('verdict.request_id', request.id)
    request.traceSpan = span
    tracing.within(ctx, done)
  })
}

function logRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  method: string,
  route: string,
  status: number,
): void {
  const traceparent = request.headers.traceparent
  const traceId = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent)?.[1] : undefined
  const line = {
    method,
    route,
    status,
    duration_ms: Math.round(reply.elapsedTime * 100) / 100,
    tenant: request.auth?.tenant.id ?? null,
    ...(traceId ? { trace_id: traceId } : {}),
  }
  if (status >= 500) request.log.error({ ...line, err: request.failure ?? undefined }, 'request failed')
  else request.log.info(line, 'request')
}
