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

export const DEFAULT_DEADLINE_MS = 1500
export const DEFAULT_CACHE_SIZE = 1000
/** Small, fast, non-reasoning models: a reasoning model spends the token budget and the deadline thinking. */
export const DEFAULT_MODELS: Record<ProviderName, string> = {
  openai: 'gpt-4.1-mini',
  anthropic: 'claude-haiku-4-5',
}
const DEFAULT_BASE_URLS: Record<ProviderName, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
}
const KEY_VARS: Record<ProviderName, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' }
const URL_VARS: Record<ProviderName, string> = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' }

/** Empty strings count as unset, as they do for the rest of the service's settings. */
function get(env: NodeJS.ProcessEnv, name: string): string | null {
  const v = env[name]?.trim()
  return v ? v : null
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = get(env, name)
  if (raw === null) return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`)
  }
  return n
}

function baseUrl(env: NodeJS.ProcessEnv, provider: ProviderName): string {
  const raw = get(env, URL_VARS[provider]) ?? DEFAULT_BASE_URLS[provider]
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error(`${URL_VARS[provider]} must be an http(s) URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${URL_VARS[provider]} must be an http(s) URL`)
  }
  return raw.replace(/\/+$/, '')
}

/**
 * Which provider: VERDICT_AI_PROVIDER when set (`off` disables the layer even with keys present),
 * else OpenAI when OPENAI_API_KEY is set, else Anthropic when ANTHROPIC_API_KEY is set, else none.
 */
function pickProvider(env: NodeJS.ProcessEnv): ProviderName | null {
  const choice = get(env, 'VERDICT_AI_PROVIDER')?.toLowerCase() ?? null
  if (choice === 'off' || choice === 'none') return null
  if (choice === 'openai' || choice === 'anthropic') return get(env, KEY_VARS[choice]) ? choice : null
  if (choice !== null && choice !== 'auto') {
    throw new Error(`VERDICT_AI_PROVIDER must be openai, anthropic, auto or off, got "${choice}"`)
  }
  if (get(env, 'OPENAI_API_KEY')) return 'openai'
  if (get(env, 'ANTHROPIC_API_KEY')) return 'anthropic'
  return null
}

export function loadAiConfig(env: NodeJS.ProcessEnv = process.env): AiConfig {
  const deadlineMs = int(env, 'VERDICT_AI_DEADLINE_MS', DEFAULT_DEADLINE_MS, 50, 60_000)
  const cacheSize = int(env, 'VERDICT_AI_CACHE_SIZE', DEFAULT_CACHE_SIZE, 0, 1_000_000)
  const provider = pickProvider(env)
  if (provider === null) {
    return { provider: null, apiKey: null, baseUrl: null, model: null, deadlineMs, cacheSize }
  }
  return {
    provider,
    apiKey: get(env, KEY_VARS[provider]),
    baseUrl: baseUrl(env, provider),
    model: get(env, 'VERDICT_AI_MODEL') ?? DEFAULT_MODELS[provider],
    deadlineMs,
    cacheSize,
  }
}
