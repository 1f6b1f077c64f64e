import { createServer, type IncomingMessage, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Metrics } from '../../src/observability/metrics.js'
import { Tracing } from '../../src/observability/tracing.js'
import { envFor, explainerFor, type FakeProvider, startFakeProvider } from '../ai/support/fake-provider.js'
import { build, type Harness } from '../helpers/build.js'

/** A span as the OTLP/HTTP JSON encoding carries it (ids in hex). */
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: { key: string; value: Record<string, unknown> }[]
}

/**
 * A loopback OTLP/HTTP collector: it takes what the SDK's exporter posts to /v1/traces (JSON, the
 * exporter's default encoding; a protobuf body would fail the parse and the test) and keeps the spans.
 */
class LoopbackCollector {
  readonly spans: OtlpSpan[] = []
  readonly requests: { path: string; contentType: string }[] = []
  private server: Server | null = null

  async start(): Promise<string> {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '' })
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[]
        }
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) this.spans.push(...ss.spans)
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r))
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server?.close(() => r()) ?? r())
  }
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_SPAN = '00f067aa0ba902b7'

describe('traces through the OpenTelemetry SDK to an OTLP/HTTP collector', () => {
  const collector = new LoopbackCollector()
  let fake: FakeProvider
  let tracing: Tracing
  let h: Harness
  beforeAll(async () => {
    const endpoint = await collector.start()
    fake = await startFakeProvider('openai')
    fake.behave({
      kind: 'text',
      text: 'Several signals point to an automated signup from a hosting network.',
    })
    tracing = Tracing.start(`${endpoint}/`, '9.9.9')
    const metrics = new Metrics({ span: tracing.span })
    h = await build({
      explainer: explainerFor(envFor(fake, { VERDICT_AI_DEADLINE_MS: '1000' }), { signals: metrics }),
      observability: { metrics, tracing },
    })
  })
  afterAll(async () => {
    await h.close()
    await fake.close()
    await collector.stop()
  })

  it('continues the caller traceparent: request, identifier analysis, group commit and AI call spans', async () => {
    const t = await h.tenant()
    // Over a real socket: the body arrives in the socket's async context, not the request's.
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 })
    const res = await fetch(`${base}/v1/score`, {
      method: 'POST',
      headers: {
        ...t.headers,
        'content-type': 'application/json',
        traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01`,
      },
      body: JSON.stringify({ event: 'signup', email: 'someone@example.com', ip: '203.0.113.9' }),
    })
    expect(res.status).toBe(200)
    // A request without a traceparent starts a trace of its own.
    expect((await fetch(`${base}/v1/health`)).status).toBe(200)
    // Shutting down flushes the batch processor to the collector.
    await tracing.shutdown()

    expect(collector.requests.length).toBeGreaterThan(0)
    for (const r of collector.requests) {
      expect(r.path).toBe('/v1/traces')
      expect(r.contentType).toContain('application/json')
    }
    const spans = collector.spans
    const server = spans.find((s) => s.name === 'POST /v1/score')!
    expect(server).toBeDefined()
    expect(server.traceId).toBe(TRACE_ID)
    expect(server.parentSpanId).toBe(PARENT_SPAN)
    expect(server.kind).toBe(2) // SERVER
    const status = server.attributes?.find((a) => a.key === 'http.response.status_code')?.value
    expect(status).toEqual({ intValue: 200 })
    for (const name of ['identifiers.analyze', 'group.commit', 'ai.explain']) {
      const child = spans.find((s) => s.name === name)
      expect(child, name).toBeDefined()
      expect(child!.traceId, name).toBe(TRACE_ID)
      expect(child!.parentSpanId, name).toBe(server.spanId)
    }
    const health = spans.find((s) => s.name === 'GET /v1/health')!
    expect(health.traceId).not.toBe(TRACE_ID)
    expect(health.parentSpanId ?? '').toBe('')
    // Spans carry route patterns and ids, never the event's personal data.
    expect(JSON.stringify(spans)).not.toContain('someone@example.com')
    expect(JSON.stringify(spans)).not.toContain('203.0.113.9')
  })
})
