import type { ProviderName } from './types.js'

/**
 * The two documented HTTP APIs, called with fetch rather than the SDKs: one request, no retries (a retry
 * cannot fit in the deadline), our own abort signal, and no dependency to keep up to date.
 */

export interface ProviderTarget {
  provider: ProviderName
  apiKey: string
  baseUrl: string
  model: string
}

export interface Prompt {
  system: string
  user: string
}

/** A failure with our own short reason code; provider error text is never kept (it can echo the key). */
export class ProviderFailure extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** Three sentences need far fewer; the cap keeps a runaway reply cheap and fast. */
const MAX_OUTPUT_TOKENS = 220
/** A chat reply of a few hundred characters never needs more; anything bigger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024
export const ANTHROPIC_VERSION = '2023-06-01'

interface HttpRequest {
  url: string
  headers: Record<string, string>
  body: unknown
}

function openAiRequest(t: ProviderTarget, p: Prompt): HttpRequest {
  // OpenAI's own endpoint wants max_completion_tokens (max_tokens is refused by newer models); many
  // self-hosted OpenAI-compatible servers only know max_tokens.
  const official = new URL(t.baseUrl).hostname === 'api.openai.com'
  return {
    url: `${t.baseUrl}/chat/completions`,
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
    body: {
      model: t.model,
      messages: [
        { role: 'system', content: p.system },
        { role: 'user', content: p.user },
      ],
      [official ? 'max_completion_tokens' : 'max_tokens']: MAX_OUTPUT_TOKENS,
      stream: false,
    },
  }
}

function anthropicRequest(t: ProviderTarget, p: Prompt): HttpRequest {
  return {
    url: `${t.baseUrl}/v1/messages`,
    headers: {
      'x-api-key': t.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
      'content-type': 'application/json',
    },
    body: {
      model: t.model,
      max_tokens: MAX_OUTPUT_TOKENS,
      temperature: 0.2,
      system: p.system,
      messages: [{ role: 'user', content: p.user }],
    },
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

function openAiText(json: unknown): string {
  const choice = isObject(json) && Array.isArray(json['choices']) ? json['choices'][0] : undefined
  if (!isObject(choice) || !isObject(choice['message'])) throw new ProviderFailure('bad_response')
  const message = choice['message']
  if (choice['finish_reason'] === 'content_filter' || (message['refusal'] ?? null) !== null) {
    throw new ProviderFailure('refusal')
  }
  const content = message['content']
  if (content === null || content === undefined) throw new ProviderFailure('empty_output')
  if (typeof content !== 'string') throw new ProviderFailure('bad_response')
  return content
}

function anthropicText(json: unknown): string {
  if (!isObject(json) || !Array.isArray(json['content'])) throw new ProviderFailure('bad_response')
  if (json['stop_reason'] === 'refusal') throw new ProviderFailure('refusal')
  const parts: string[] = []
  for (const block of json['content']) {
    if (isObject(block) && block['type'] === 'text' && typeof block['text'] === 'string')
      parts.push(block['text'])
  }
  return parts.join(' ')
}

/** Reads the body up to a size cap, so a misbehaving endpoint cannot make us buffer without bound. */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {})
      throw new ProviderFailure('response_too_large')
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** One provider round trip; resolves to the raw reply text or rejects with a ProviderFailure. */
export async function callProvider(
  target: ProviderTarget,
  prompt: Prompt,
  fetchFn: typeof fetch,
  signal: AbortSignal,
): Promise<string> {
  const req = target.provider === 'openai' ? openAiRequest(target, prompt) : anthropicRequest(target, prompt)
  let res: Response
  try {
    res = await fetchFn(req.url, {
      method: 'POST',
      headers: req.headers,
      body: JSON.stringify(req.body),
      signal,
      redirect: 'error',
    })
  } catch {
    throw new ProviderFailure(signal.aborted ? 'timeout' : 'network_error')
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {})
    throw new ProviderFailure(`http_${res.status}`)
  }
  let json: unknown
  try {
    json = JSON.parse(await readCapped(res))
  } catch (err) {
    if (err instanceof ProviderFailure) throw err
    throw new ProviderFailure(signal.aborted ? 'timeout' : 'bad_response')
  }
  return target.provider === 'openai' ? openAiText(json) : anthropicText(json)
}
