import { isIP } from 'node:net'
import { parseDatabaseUrl, type StorageTarget } from '../store/index.js'

/**
 * Which proxies may name the client in X-Forwarded-For: off, a number of hops (the client is that
 * many entries from the right, counting the socket peer as the first hop), or the proxies' own
 * addresses/CIDRs (entries are read from the right while they come from one of them).
 */
export type TrustProxy = false | number | string[]

/** Everything the service reads from the environment, parsed once at start. */
export interface Settings {
  host: string
  port: number
  trustProxy: TrustProxy
  storage: StorageTarget
  /** At least MIN_SECRET_BYTES when set. */
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
  /** How long SIGTERM/SIGINT waits for in-flight requests before the process exits anyway. */
  shutdownMs: number
}

/** Below this, a weak secret could be guessed offline from a leaked hash and a known input. */
export const MIN_SECRET_BYTES = 32

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return n
}

// The named ranges proxy-addr (Fastify's trust compiler) understands.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function isAddressOrCidr(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const [addr = '', bits, ...rest] = entry.split('/')
  const family = isIP(addr)
  if (!family || rest.length) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
}

/** `true` = one hop, `N` = N hops, else a comma-separated list of proxy addresses/CIDRs. */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim()
  if (value === '' || /^(0|false|no|off)$/i.test(value)) return false
  // Exactly one hop, never "trust every hop": that would let the caller pick the leftmost entry.
  if (/^(true|yes|on)$/i.test(value)) return 1
  if (/^\d+$/.test(value)) return Number(value)
  const list = value.split(',').map((e) => e.trim())
  const bad = list.find((e) => !isAddressOrCidr(e))
  if (bad !== undefined)
    throw new Error(
      `TRUST_PROXY must be true, a hop count or a comma-separated list of proxy addresses/CIDRs; "${bad}" is none of those`,
    )
  return list
}

/** An unset secret is generated (SQLite only, see store/secret.ts); a set one must be long enough. */
export function parseSecret(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (Buffer.byteLength(raw, 'utf8') < MIN_SECRET_BYTES)
    throw new Error(
      `VERDICT_SECRET must be at least ${MIN_SECRET_BYTES} bytes (got ${Buffer.byteLength(raw, 'utf8')}); generate one with: openssl rand -base64 48`,
    )
  return raw
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    host: env['HOST'] || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    trustProxy: parseTrustProxy(env['TRUST_PROXY']),
    storage: parseDatabaseUrl(env['DATABASE_URL']),
    secret: parseSecret(env['VERDICT_SECRET']),
    logLevel: env['LOG_LEVEL'] || 'info',
    bodyLimitBytes: int(env, 'VERDICT_BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024),
    keylessRateLimit: int(env, 'VERDICT_KEYLESS_RATE_LIMIT', 60, 1),
    defaultRateLimit: 240,
    dnsTimeoutMs: int(env, 'VERDICT_DNS_TIMEOUT_MS', 1500, 50),
    feedsReloadMs: int(env, 'VERDICT_FEEDS_RELOAD_MS', 60_000, 1000),
    defaultMonthlyQuota: 10_000,
    shutdownMs: int(env, 'VERDICT_SHUTDOWN_MS', 10_000, 0),
  }
}
