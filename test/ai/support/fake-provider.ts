import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createExplainer, type Explainer, type ExplainerOptions } from '../../../src/ai/index.js'
import { loadSettings } from '../../../src/config/settings.js'

/**
 * A loopback stand-in for a provider that speaks the real wire protocol: OpenAI chat completions
 * (POST /v1/chat/completions, `authorization: Bearer`) or Anthropic messages (POST /v1/messages,
 * `x-api-key` + `anthropic-version`). It checks auth and request shape like the real APIs do, and records
 * every request so tests can inspect the prompts.
 */

export type Protocol = 'openai' | 'anthropic'

/** What the fake answers: a reply text, or one of the ways a real provider misbehaves. */
export type Behaviour =
  | { kind: 'text'; text: string }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'garbage'; body: string }
  | { kind: 'refusal' }
  | { kind: 'empty' }

export interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
  /** Every string of the request body joined: the whole prompt as the provider sees it. */
  promptText: string
}

export interface FakeProvider {
  protocol: Protocol
  /** The value for OPENAI_BASE_URL or ANTHROPIC_BASE_URL. */
  baseUrl: string
  apiKey: string
  requests: Received[]
  behave(b: Behaviour | ((req: Received) => Behaviour)): void
  close(): Promise<void>
}

function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v)
  else if (Array.isArray(v)) for (const x of v) strings(x, out)
  else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out)
  return out
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

function openAiError(res: ServerResponse, status: number, message: string, type: string): void {
  send(res, status, { error: { message, type, param: null, code: null } })
}

function anthropicError(res: ServerResponse, status: number, message: string, type: string): void {
  send(res, status, { type: 'error', error: { type, message } })
}

function openAiReply(model: unknown, content: string | null, refusal: string | null = null) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      { index: 0, message: { role: 'assistant', content, refusal }, logprobs: null, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140 },
  }
}

function anthropicReply(model: unknown, text: string, stopReason = 'end_turn') {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model,
    content: text === '' ? [] : [{ type: 'text', text }],
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 40 },
  }
}

interface Rejection {
  status: number
  type: string
  message: string
}

/** Rejects what the real API would reject, so a request the fake accepts is one the provider accepts. */
function rejection(protocol: Protocol, req: Received, apiKey: string): Rejection | null {
  const b = req.body
  const messages = Array.isArray(b['messages']) ? (b['messages'] as Record<string, unknown>[]) : null
  if (protocol === 'openai') {
    if (req.path !== '/v1/chat/completions')
      return { status: 404, type: 'invalid_request_error', message: 'not found' }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, type: 'invalid_request_error', message: 'Incorrect API key provided' }
    }
    const ok =
      messages?.length && messages.every((m) => typeof m.role === 'string' && typeof m.content === 'string')
    if (typeof b['model'] !== 'string' || !ok)
      return { status: 400, type: 'invalid_request_error', message: 'bad request' }
    return null
  }
  if (req.path !== '/v1/messages') return { status: 404, type: 'not_found_error', message: 'not found' }
  if (req.headers['x-api-key'] !== apiKey)
    return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' }
  if (typeof req.headers['anthropic-version'] !== 'string') {
    return { status: 400, type: 'invalid_request_error', message: 'anthropic-version header is required' }
  }
  const ok = messages?.length && messages.every((m) => m.role === 'user' || m.role === 'assistant')
  if (typeof b['model'] !== 'string' || typeof b['max_tokens'] !== 'number' || !ok) {
    return { status: 400, type: 'invalid_request_error', message: 'bad request' }
  }
  return null
}

export async function startFakeProvider(
  protocol: Protocol,
  apiKey = `sk-test-${protocol}-5ecret`,
): Promise<FakeProvider> {
  const requests: Received[] = []
  let behaviour: Behaviour | ((req: Received) => Behaviour) = {
    kind: 'text',
    text: 'Default reply sentence for tests.',
  }

  const server: Server = createServer((request, res) => {
    const chunks: Buffer[] = []
    request.on('data', (c: Buffer) => chunks.push(c))
    request.on('end', () => {
      let body: Record<string, unknown>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return send(res, 400, { error: 'invalid json' })
      }
      const received: Received = {
        path: request.url ?? '',
        headers: request.headers,
        body,
        promptText: strings(body).join('\n'),
      }
      requests.push(received)
      const refused = rejection(protocol, received, apiKey)
      if (refused) {
        const err = refused
        return protocol === 'openai'
          ? openAiError(res, err.status, err.message, err.type)
          : anthropicError(res, err.status, err.message, err.type)
      }
      const b = typeof behaviour === 'function' ? behaviour(received) : behaviour
      const model = body['model']
      switch (b.kind) {
        case 'hang':
          return // never answers; the client must give up on its own
        case 'status':
          return protocol === 'openai'
            ? openAiError(res, b.status, 'The server had an error', 'server_error')
            : anthropicError(res, b.status, 'Internal server error', 'api_error')
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' })
          return res.end(b.body)
        case 'refusal':
          return send(
            res,
            200,
            protocol === 'openai'
              ? openAiReply(model, null, 'I cannot help with that request.')
              : anthropicReply(model, '', 'refusal'),
          )
        case 'empty':
          return send(res, 200, protocol === 'openai' ? openAiReply(model, '') : anthropicReply(model, ''))
        case 'text':
          return send(
            res,
            200,
            protocol === 'openai' ? openAiReply(model, b.text) : anthropicReply(model, b.text),
          )
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  return {
    protocol,
    baseUrl: protocol === 'openai' ? `${origin}/v1` : origin,
    apiKey,
    requests,
    behave(b) {
      behaviour = b
    },
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

/** The environment that points an explainer at a fake provider. */
export function envFor(fake: FakeProvider, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return fake.protocol === 'openai'
    ? { OPENAI_API_KEY: fake.apiKey, OPENAI_BASE_URL: fake.baseUrl, ...extra }
    : { ANTHROPIC_API_KEY: fake.apiKey, ANTHROPIC_BASE_URL: fake.baseUrl, ...extra }
}

/** The explainer the server builds when started with these environment variables. */
export function explainerFor(env: NodeJS.ProcessEnv, opts?: ExplainerOptions): Explainer {
  return createExplainer(loadSettings(env).ai, opts)
}
