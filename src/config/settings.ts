import { parseDatabaseUrl, type StorageTarget } from '../store/index.js'

/** Everything the service reads from the environment, parsed once at start. */
export interface Settings {
  host: string
  port: number
  trustProxy: boolean
  storage: StorageTarget
  secret: string | undefined
  logLevel: string
  bodyLimitBytes: number
  /** Requests per minute per client IP on routes callable without a key. */
  keylessRateLimit: number
  defaultRateLimit: number
  /** Deadline of one MX lookup. */
  dnsTimeoutMs: number
  /** How often the server looks for refreshed feed files. */
  feedsReloadMs: number
  defaultMonthlyQuota: number
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return n
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  return /^(1|true|yes|on)$/i.test(env[name] ?? '')
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    host: env['HOST'] || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    trustProxy: bool(env, 'TRUST_PROXY'),
    storage: parseDatabaseUrl(env['DATABASE_URL']),
    secret: env['VERDICT_SECRET'] || undefined,
    logLevel: env['LOG_LEVEL'] || 'info',
    bodyLimitBytes: int(env, 'VERDICT_BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024),
    keylessRateLimit: int(env, 'VERDICT_KEYLESS_RATE_LIMIT', 60, 1),
    defaultRateLimit: 240,
    dnsTimeoutMs: int(env, 'VERDICT_DNS_TIMEOUT_MS', 1500, 50),
    feedsReloadMs: int(env, 'VERDICT_FEEDS_RELOAD_MS', 60_000, 1000),
    defaultMonthlyQuota: 10_000,
  }
}
