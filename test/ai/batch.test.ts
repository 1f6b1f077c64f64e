import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  envFor,
  explainerFor,
  type FakeProvider,
  type Protocol,
  startFakeProvider,
} from './support/fake-provider.js'
import { AI_TEXT, patternInput } from './support/inputs.js'

// A provider that answers gets all the time a loaded machine may need; only a hang waits out the short one.
const DEADLINE = 10_000
const HANG_DEADLINE = 300
const inputs = Array.from({ length: 50 }, (_, i) => patternInput(i % 3, i))

describe.each<Protocol>(['openai', 'anthropic'])('explainMany over %s', (protocol) => {
  let fake: FakeProvider
  beforeEach(async () => {
    fake = await startFakeProvider(protocol)
  })
  afterEach(() => fake.close())

  const explainer = (deadline = DEADLINE) =>
    explainerFor(envFor(fake, { VERDICT_AI_DEADLINE_MS: String(deadline) }))

  it('asks once per distinct pattern: 50 rows of 3 patterns cost at most 3 calls', async () => {
    fake.behave({ kind: 'text', text: AI_TEXT })
    const ai = explainer()
    const out = await ai.explainMany(inputs)
    expect(fake.requests.length).toBeLessThanOrEqual(3)
    expect(out).toHaveLength(50)
    expect(out.every((e) => e.text === AI_TEXT && e.source === 'ai' && e.warning === undefined)).toBe(true)
    // The next batch is answered wholly from the cache.
    const again = await ai.explainMany(inputs)
    expect(again.every((e) => e.source === 'cache')).toBe(true)
    expect(fake.requests.length).toBeLessThanOrEqual(3)
  })

  it('gives each pattern its own text, in row order', async () => {
    const codes = ['ip_velocity', 'headless_browser', 'gibberish_email']
    const textFor = (code: string) =>
      `The main reason for this outcome is the ${code.replace('_', ' ')} signal.`
    fake.behave((req) => ({
      kind: 'text',
      text: textFor(codes.find((c) => req.promptText.includes(c)) ?? ''),
    }))
    const out = await explainer().explainMany(inputs.slice(0, 6))
    expect(out.map((e) => e.text)).toEqual([...codes, ...codes].map(textFor))
  })

  it('holds the whole batch to one deadline when the provider hangs', async () => {
    fake.behave({ kind: 'hang' })
    const ai = explainer(HANG_DEADLINE)
    const out = await ai.explainMany(inputs)
    expect(fake.requests.length).toBeLessThanOrEqual(3)
    out.forEach((e, i) => {
      expect(e).toEqual({
        text: inputs[i]!.fallback,
        source: 'template',
        warning: 'ai_explanation_unavailable: timeout',
      })
    })
    expect(ai.status().recentFailures).toBe(fake.requests.length)
  })

  it('mixes cached and fresh rows, and a failed pattern does not spoil the others', async () => {
    fake.behave({ kind: 'text', text: AI_TEXT })
    const ai = explainer()
    await ai.explain(patternInput(0, 0))
    fake.behave((req) =>
      req.promptText.includes('headless_browser')
        ? { kind: 'status', status: 500 }
        : { kind: 'text', text: AI_TEXT },
    )
    const out = await ai.explainMany([patternInput(0, 1), patternInput(1, 0), patternInput(2, 0)])
    expect(out.map((e) => e.source)).toEqual(['cache', 'template', 'ai'])
    expect(out[1]!.warning).toBe('ai_explanation_unavailable: http_500')
    expect(fake.requests).toHaveLength(3)
  })

  it('returns an empty list for an empty batch', async () => {
    expect(await explainer().explainMany([])).toEqual([])
    expect(fake.requests).toHaveLength(0)
  })
})
