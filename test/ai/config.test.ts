import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { envFor, explainerFor, type FakeProvider, startFakeProvider } from './support/fake-provider.js'
import { AI_TEXT, check, explanationInput } from './support/inputs.js'

let openai: FakeProvider
let anthropic: FakeProvider
beforeEach(async () => {
  openai = await startFakeProvider('openai')
  anthropic = await startFakeProvider('anthropic')
  openai.behave({ kind: 'text', text: AI_TEXT })
  anthropic.behave({ kind: 'text', text: AI_TEXT })
})
afterEach(async () => {
  await openai.close()
  await anthropic.close()
})

const bothUrls = () => ({ OPENAI_BASE_URL: openai.baseUrl, ANTHROPIC_BASE_URL: anthropic.baseUrl })

describe('without a key', () => {
  it('returns the template silently and calls nobody', async () => {
    const ai = explainerFor({ ...bothUrls(), OPENAI_API_KEY: '', VERDICT_AI_MODEL: 'x' })
    const input = explanationInput()
    expect(await ai.explain(input)).toEqual({ text: input.fallback, source: 'template' })
    expect(await ai.explainMany([input, input])).toEqual([
      { text: input.fallback, source: 'template' },
      { text: input.fallback, source: 'template' },
    ])
    expect(openai.requests.length + anthropic.requests.length).toBe(0)
    expect(ai.status()).toEqual({
      configured: false,
      provider: null,
      model: null,
      deadlineMs: 1500,
      cacheEntries: 0,
      cacheSize: 1000,
      recentFailures: 0,
      lastFailure: null,
      lastFailureAtMs: null,
      backingOff: false,
    })
  })
})

describe('provider choice', () => {
  const keys = () => ({ OPENAI_API_KEY: openai.apiKey, ANTHROPIC_API_KEY: anthropic.apiKey })

  it('prefers OpenAI when both keys are set, unless VERDICT_AI_PROVIDER says otherwise', async () => {
    const auto = explainerFor({ ...bothUrls(), ...keys() })
    expect(auto.status()).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini' })
    await auto.explain(explanationInput())
    const chosen = explainerFor({ ...bothUrls(), ...keys(), VERDICT_AI_PROVIDER: 'anthropic' })
    expect(chosen.status()).toMatchObject({ provider: 'anthropic', model: 'claude-haiku-4-5' })
    await chosen.explain(explanationInput())
    expect([openai.requests.length, anthropic.requests.length]).toEqual([1, 1])
  })

  it('uses Anthropic when only its key is set', () => {
    expect(explainerFor({ ...bothUrls(), ANTHROPIC_API_KEY: 'k' }).status().provider).toBe('anthropic')
  })

  it('can be switched off while keys are present, and a chosen provider without its key is off', async () => {
    const off = explainerFor({ ...bothUrls(), ...keys(), VERDICT_AI_PROVIDER: 'off' })
    const missing = explainerFor({ ...bothUrls(), OPENAI_API_KEY: 'k', VERDICT_AI_PROVIDER: 'anthropic' })
    for (const ai of [off, missing]) {
      expect(ai.status().configured).toBe(false)
      expect((await ai.explain(explanationInput())).source).toBe('template')
    }
    expect(openai.requests.length + anthropic.requests.length).toBe(0)
  })

  it('rejects malformed settings at creation instead of misbehaving later', () => {
    expect(() => explainerFor({ VERDICT_AI_PROVIDER: 'gemini' })).toThrow(/VERDICT_AI_PROVIDER/)
    expect(() => explainerFor({ VERDICT_AI_DEADLINE_MS: 'soon' })).toThrow(/VERDICT_AI_DEADLINE_MS/)
    expect(() => explainerFor({ VERDICT_AI_CACHE_SIZE: '-1' })).toThrow(/VERDICT_AI_CACHE_SIZE/)
    expect(() => explainerFor({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'ftp://x' })).toThrow(/OPENAI_BASE_URL/)
  })
})

describe('status and failure accounting', () => {
  it('counts failures over the last ten minutes of the injected clock', async () => {
    let now = 1_000_000
    const ai = explainerFor(envFor(openai, { VERDICT_AI_DEADLINE_MS: '400' }), { now: () => now })
    openai.behave({ kind: 'status', status: 500 })
    await ai.explain(explanationInput({ checks: [check('vpn_ip', 30)] }))
    now += 4 * 60_000
    await ai.explain(explanationInput({ checks: [check('proxy_ip', 30)] }))
    expect(ai.status()).toMatchObject({
      deadlineMs: 400,
      recentFailures: 2,
      lastFailure: 'http_500',
      lastFailureAtMs: 1_000_000 + 4 * 60_000,
    })
    now += 7 * 60_000
    expect(ai.status().recentFailures).toBe(1)
    now += 4 * 60_000
    expect(ai.status()).toMatchObject({ recentFailures: 0, lastFailure: 'http_500' })
  })

  it('backs off after five failures in a row, then tries again once the pause is over', async () => {
    let now = 0
    const ai = explainerFor(envFor(openai), { now: () => now })
    openai.behave({ kind: 'status', status: 502 })
    for (let w = 1; w <= 5; w++) await ai.explain(explanationInput({ checks: [check('vpn_ip', w)] }))
    expect(openai.requests).toHaveLength(5)
    expect(ai.status().backingOff).toBe(true)
    const skipped = await ai.explain(explanationInput({ checks: [check('vpn_ip', 6)] }))
    expect(skipped.warning).toBe('ai_explanation_unavailable: provider_backoff')
    expect(openai.requests).toHaveLength(5)
    now += 30_000
    openai.behave({ kind: 'text', text: AI_TEXT })
    expect((await ai.explain(explanationInput({ checks: [check('vpn_ip', 7)] }))).source).toBe('ai')
    expect(ai.status()).toMatchObject({ backingOff: false, recentFailures: 5 })
  })

  it('keeps the cache bounded', async () => {
    const ai = explainerFor(envFor(openai, { VERDICT_AI_CACHE_SIZE: '2' }))
    for (let w = 1; w <= 4; w++) await ai.explain(explanationInput({ checks: [check('vpn_ip', w)] }))
    expect(ai.status()).toMatchObject({ cacheEntries: 2, cacheSize: 2 })
    // The oldest pattern was evicted, so it costs a call again; the newest is still cached.
    expect((await ai.explain(explanationInput({ checks: [check('vpn_ip', 4)] }))).source).toBe('cache')
    expect((await ai.explain(explanationInput({ checks: [check('vpn_ip', 1)] }))).source).toBe('ai')
    expect(openai.requests).toHaveLength(5)
  })

  it('answers malformed input with the template instead of throwing', async () => {
    const ai = explainerFor(envFor(openai))
    const bad = { ...explanationInput(), verdict: 'maybe' } as unknown as Parameters<typeof ai.explain>[0]
    expect(await ai.explain(bad)).toEqual({
      text: bad.fallback,
      source: 'template',
      warning: 'ai_explanation_unavailable: bad_input',
    })
    expect(openai.requests).toHaveLength(0)
  })
})
