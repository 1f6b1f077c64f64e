import {
  type Context,
  context,
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'

/** The OTLP/HTTP path of traces under the collector's base URL (as the OTEL_EXPORTER_OTLP_ENDPOINT convention says). */
const TRACES_PATH = 'v1/traces'

/**
 * OpenTelemetry tracing through the SDK's OTLP/HTTP exporter. Loaded (dynamically, by server.ts) and
 * built only when OTEL_EXPORTER_OTLP_ENDPOINT is set: without it the SDK is never imported (seconds of
 * start-up on a busy machine), the app installs no tracing hook and `Signals.span` just calls its
 * function, so tracing off costs nothing. Other modules import only its types.
 * `start` registers the provider, the async-local-storage context manager and the W3C propagator
 * globally (the OpenTelemetry API's model), which is why only server.ts (or a test) calls it.
 */
export class Tracing {
  private constructor(
    private readonly provider: NodeTracerProvider,
    private readonly tracer: Tracer,
  ) {}

  static start(endpoint: string, version: string): Tracing {
    const url = `${endpoint.replace(/\/+$/, '')}/${TRACES_PATH}`
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'verdict', [ATTR_SERVICE_VERSION]: version }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
    })
    provider.register({ propagator: new W3CTraceContextPropagator() })
    return new Tracing(provider, provider.getTracer('verdict', version))
  }

  /**
   * The server span of a request, continuing the caller's `traceparent` when it sent a valid one, and
   * the context to run the request in.
   */
  startRequest(
    headers: Record<string, string | string[] | undefined>,
    name: string,
  ): { span: Span; ctx: Context } {
    const parent = propagation.extract(ROOT_CONTEXT, headers, defaultTextMapGetter)
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER }, parent)
    return { span, ctx: trace.setSpan(parent, span) }
  }

  /** Runs `fn` in a child span of the current one; a rejection marks the span as an error. */
  readonly span = <T>(name: string, fn: () => Promise<T>): Promise<T> =>
    this.tracer.startActiveSpan(name, (span) =>
      fn().then(
        (value) => {
          span.end()
          return value
        },
        (err: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR })
          if (err instanceof Error) span.recordException(err)
          span.end()
          throw err
        },
      ),
    )

  /** Runs `fn` (and everything it starts) inside `ctx`. */
  within<T>(ctx: Context, fn: () => T): T {
    return context.with(ctx, fn)
  }

  /** Ends a request's server span with its status (5xx marks it as an error). */
  endRequest(span: Span, status: number): void {
    span.setAttribute('http.response.status_code', status)
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
    span.end()
  }

  /** Exports what is buffered and unregisters the global provider. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown()
    trace.disable()
    context.disable()
    propagation.disable()
  }
}

export type { Span }
