import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  envFor,
  explainerFor,
  type FakeProvider,
  type Protocol,
  startFakeProvider,
} from './support/fake-provider.js'
import { AI_TEXT, explanationInput } from './support/inputs.js'

// A provider that answers gets all the time a loaded machine may need; only a hang waits out the short one.
const DEADLINE = 10_000
const HANG_DEADLINE = 300

describe.each<Protocol>(['openai', 'anthropic'])('%s protocol', (protocol) => {
  let fake: FakeProvider
  beforeEach(async () => {
    fake = await startFakeProvider(protocol)
  })
  afterEach(() => fake.close())

  const explainer = (extra: NodeJS.ProcessEnv = {}) =>
    explainerFor(envFor(fake, { VERDICT_AI_DEADLINE_MS: String(DEADLINE), ...extra }))

  it('returns the provider text, then serves the repeat from the cache without a provider call', async () => {
    fake.behave({ kind: 'text', text: AI_TEXT })
    const ai = explainer()
    const input = explanationInput()
    expect(await ai.explain(input)).toEqual({ text: AI_TEXT, source: 'ai' })
    expect(fake.requests).toHaveLength(1)
    expect(await ai.explain({ ...input })).toEqual({ text: AI_TEXT, source: 'cache' })
    expect(fake.requests).toHaveLength(1)
    expect(ai.status().cacheEntries).toBe(1)
  })

  it('sends the key in the protocol header, the chosen model, and never shows the key in status', async () => {
    fake.behave({ kind: 'text', text: AI_TEXT })
    const ai = explainer({ VERDICT_AI_MODEL: 'tiny-model-1' })
    await ai.explain(explanationInput())
    const req = fake.requests[0]!
    expect(req.body['model']).toBe('tiny-model-1')
    if (protocol === 'openai') {
      expect(req.path).toBe('/v1/chat/completions')
      expect(req.headers.authorization).toBe(`Bearer ${fake.apiKey}`)
      expect(req.headers['x-api-key']).toBeUndefined()
    } else {
      expect(req.path).toBe('/v1/messages')
      expect(req.headers['x-api-key']).toBe(fake.apiKey)
      expect(req.headers['anthropic-version']).toBe('2023-06-01')
      expect(req.headers.authorization).toBeUndefined()
    }
    const status = ai.status()
    expect(status).toMatchObject({ configured: true, provider: protocol, model: 'tiny-model-1' })
    expect(JSON.stringify(status)).not.toContain(fake.apiKey)
    expect(JSON.stringify(status)).not.toContain('5ecret')
  })

  it('makes concurrent identical misses share one provider call', async () => {
    fake.behave({ kind: 'text', text: AI_TEXT })
    const ai = explainer()
    const results = await Promise.all(Array.from({ length: 6 }, () => ai.explain(explanationInput())))
    expect(fake.requests).toHaveLength(1)
    expect(results.every((r) => r.text === AI_TEXT)).toBe(true)
  })

  const failures: [string, Parameters<FakeProvider['behave']>[0], string][] = [
    ['a 500', { kind: 'status', status: 500 }, 'http_500'],
    ['a 429', { kind: 'status', status: 429 }, 'http_429'],
    ['a hang past the deadline', { kind: 'hang' }, 'timeout'],
    ['a non-JSON body', { kind: 'garbage', body: '<html>oops</html>' }, 'bad_response'],
    ['JSON of the wrong shape', { kind: 'garbage', body: '{"result":"fine"}' }, 'bad_response'],
    ['an empty reply', { kind: 'empty' }, 'empty_output'],
    ['a protocol-level refusal', { kind: 'refusal' }, 'refusal'],
    [
      'a refusal in the text',
      { kind: 'text', text: "I'm sorry, but I can't help with that request." },
      'refusal',
    ],
    ['whitespace and markup only', { kind: 'text', text: ' \n** ``` \u200b ' }, 'empty_output'],
    [
      'an address in the text',
      { kind: 'text', text: 'The user jane.doe@example.com signed up from a hosting network today.' },
      'identifier_in_output',
    ],
    [
      'a link in the text',
      { kind: 'text', text: 'See https://evil.example/report for the full picture of this event.' },
      'identifier_in_output',
    ],
  ]

  it.each(failures)('falls back to the template with a warning on %s', async (_, b, reason) => {
    fake.behave(b)
    const ai = explainer(
      typeof b !== 'function' && b.kind === 'hang' ? { VERDICT_AI_DEADLINE_MS: String(HANG_DEADLINE) } : {},
    )
    const input = explanationInput()
    const out = await ai.explain(input)
    expect(out).toEqual({
      text: input.fallback,
      source: 'template',
      warning: `ai_explanation_unavailable: ${reason}`,
    })
    expect(fake.requests).toHaveLength(1)
    const status = ai.status()
    expect(status.recentFailures).toBe(1)
    expect(status.lastFailure).toBe(reason)
    expect(status.cacheEntries).toBe(0)
  })

  it('does not cache a failure: the next call asks the provider again', async () => {
    fake.behave({ kind: 'status', status: 503 })
    const ai = explainer()
    await ai.explain(explanationInput())
    fake.behave({ kind: 'text', text: AI_TEXT })
    expect(await ai.explain(explanationInput())).toEqual({ text: AI_TEXT, source: 'ai' })
    expect(fake.requests).toHaveLength(2)
  })

  it('cleans markdown and stray whitespace from the reply', async () => {
    fake.behave({
      kind: 'text',
      text: '  **Blocked.**   The   connection came from a *hosting* network,\n\nnot a home one.  ',
    })
    const out = await explainer().explain(explanationInput())
    expect(out).toEqual({
      text: 'Blocked. The connection came from a hosting network, not a home one.',
      source: 'ai',
    })
  })

  it('bounds a long reply at a sentence boundary', async () => {
    const sentence = 'The connection came from a hosting network rather than from a home or mobile network. '
    fake.behave({ kind: 'text', text: sentence.repeat(20) })
    const out = await explainer().explain(explanationInput())
    expect(out.source).toBe('ai')
    expect(out.text.length).toBeLessThanOrEqual(600)
    expect(out.text.endsWith('network.')).toBe(true)
  })
})
