import type { ProviderName } from './types.js'

export interface AiConfig {
  provider: ProviderName | null
  apiKey: string | null
  /** Without a trailing slash. OpenAI's includes the `/v1` path, Anthropic's does not (as in their SDKs). */
  baseUrl: string | null
  model: string | null
  deadlineMs: number
  cacheSize: number
}

/** The AI settings as configured (see config/settings.ts), before a provider is chosen. */
export interface AiChoice {
  /** `off`/`none` disable the layer even with keys present; `auto` picks by the keys that are set. */
  provider: 'auto' | 'off' | 'none' | ProviderName
  keys: Record<ProviderName, string | undefined>
  baseUrls: Record<ProviderName, string>
  model: string | undefined
  deadlineMs: number
  cacheSize: number
}

export const DEFAULT_DEADLINE_MS = 1500
export const DEFAULT_CACHE_SIZE = 1000
/** Small, fast, non-reasoning models: a reasoning model spends the token budget and the deadline thinking. */
export const DEFAULT_MODELS: Record<ProviderName, string> = {
  openai: 'gpt-4.1-mini',
  anthropic: 'claude-haiku-4-5',
}
export const DEFAULT_BASE_URLS: Record<ProviderName, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
}

/** No provider: every explanation is the templated text. */
export const AI_OFF: AiConfig = {
  provider: null,
  apiKey: null,
  baseUrl: null,
  model: null,
  deadlineMs: DEFAULT_DEADLINE_MS,
  cacheSize: DEFAULT_CACHE_SIZE,
}

/**
 * Which provider: the chosen one when its key is set (`off` disables the layer even with keys present),
 * else, on `auto`, OpenAI when its key is set, else Anthropic when its key is set, else none.
 */
function pickProvider(choice: AiChoice): ProviderName | null {
  if (choice.provider === 'off' || choice.provider === 'none') return null
  if (choice.provider !== 'auto') return choice.keys[choice.provider] ? choice.provider : null
  if (choice.keys.openai) return 'openai'
  if (choice.keys.anthropic) return 'anthropic'
  return null
}

export function resolveAiConfig(choice: AiChoice): AiConfig {
  const { deadlineMs, cacheSize } = choice
  const provider = pickProvider(choice)
  if (provider === null) return { ...AI_OFF, deadlineMs, cacheSize }
  return {
    provider,
    apiKey: choice.keys[provider] ?? null,
    baseUrl: choice.baseUrls[provider].replace(/\/+$/, ''),
    model: choice.model ?? DEFAULT_MODELS[provider],
    deadlineMs,
    cacheSize,
  }
}
