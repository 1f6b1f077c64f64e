import { isIP } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { type AiConfig, resolveAiConfig } from '../ai/config.js'
import { FEED_NAMES, type FeedUrls, feedUrlEnvVar } from '../intel/feeds/catalog.js'
import type { TenantLimits } from '../services/runtime/tenant-work.js'
import { parseDatabaseUrl, type StorageTarget } from '../store/index.js'
import { type Env, readEnv } from './env.js'

/**
 * Which proxies may name the client in X-Forwarded-For: off, a number of hops (the client is that
 * many entries from the right, counting the socket peer as the first hop), or the proxies' own
 * addresses/CIDRs (entries are read from the right while they come from one of them).
 */
export type TrustProxy = false | number | string[]

/** Everything the service reads from the environment, parsed and validated once at start. */
export interface Settings {
  host: string
  port: number
  trustProxy: TrustProxy
  storage: StorageTarget
  /** At least MIN_SECRET_BYTES when set. */
  secret: string | undefined
  /** Where the first start also writes the default tenant's key (opt-in, SQLite only); else undefined. */
  firstKeyFile: string | undefined
  logLevel: string
  bodyLimitBytes: number
  /** Requests per minute per client IP on routes callable without a key. */
  keylessRateLimit: number
  /** How long SIGTERM/SIGINT waits for in-flight requests before the process exits anyway. */
  shutdownMs: number
  /** Load shedding: new requests get 503 past either bound (services/runtime/overload.ts). */
  overload: { maxQueue: number; maxLagMs: number }
  /** Per-tenant bounds on heavy work, keys and console users (services/runtime/tenant-work.ts). */
  tenantLimits: TenantLimits
  email: {
    /** DNS servers for MX lookups; undefined: the system resolver. */
    dnsServers: string[] | undefined
    /** Deadline of one MX lookup. */
    dnsTimeoutMs: number
    /** A domain that must resolve: the probe that tells a broken resolver from mailless domains. */
    dnsCanary: string
    /** Whether the SMTP RCPT probe behind `catch_all` may run. */
    smtpProbe: boolean
  }
  feeds: {
    /** Absolute directory of the stored feeds. */
    dir: string
    urls: FeedUrls
    /** Bytes one feed URL may deliver. */
    maxBytes: number
    /** How often the server looks for refreshed feed files. */
    reloadMs: number
  }
  ai: AiConfig
  cluster: {
    /** Redis shared by the nodes; undefined: limits are per process. */
    redisUrl: string | undefined
    redisPrefix: string
    /** Nodes behind the load balancer: while Redis is down each enforces its share of a limit. */
    nodes: number
    /** Lifetime of a background-job lease (renewed every third of it by its holder). */
    leaseTtlMs: number
  }
  /** Days of events, observations, lookups and trap hits kept. */
  retentionDays: number
  /** Set when verdict terminates TLS itself: absolute paths of the PEM certificate and key. */
  tls: { certFile: string; keyFile: string } | undefined
  /** Lower-cased name of the header a trusted edge passes the client's JA4 in; honoured only from trusted proxies. */
  ja4Header: string | undefined
  /** Metrics, probes and traces (src/observability/). */
  observability: {
    /** Second listener for /metrics, /livez, /readyz; undefined: they are on the main port. */
    adminPort: number | undefined
    /** Bearer token of /metrics on the main port (no admin port); undefined: not served there. */
    metricsToken: string | undefined
    /** Whether score counters carry a `tenant` label. */
    tenantLabels: boolean
    /** OTLP/HTTP collector base URL; undefined: tracing off. */
    otlpEndpoint: string | undefined
  }
  /** Outbound webhooks: where they may go and which extra CAs their https trusts (absolute path). */
  webhooks: { allowHttp: boolean; allowPrivate: boolean; caFile: string | undefined }
}

/** Below this, a weak secret could be guessed offline from a leaked hash and a known input. */
export const MIN_SECRET_BYTES = 32

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

/** An unset secret is generated (SQLite only, see config/secret.ts); a set one must be long enough. */
export function parseSecret(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (Buffer.byteLength(raw, 'utf8') < MIN_SECRET_BYTES)
    throw new Error(
      `VERDICT_SECRET must be at least ${MIN_SECRET_BYTES} bytes (got ${Buffer.byteLength(raw, 'utf8')}); generate one with: openssl rand -base64 48`,
    )
  return raw
}

/**
 * TLS_CERT_FILE and TLS_KEY_FILE come together; with them the app's own server terminates TLS, which
 * Fastify's extra listener for HOST=localhost (a second server for ::1) would bypass.
 */
export function parseTls(
  certFile: string | undefined,
  keyFile: string | undefined,
  host: string,
): Settings['tls'] {
  if (certFile === undefined && keyFile === undefined) return undefined
  if (certFile === undefined || keyFile === undefined)
    throw new Error(
      `TLS_CERT_FILE and TLS_KEY_FILE must be set together (only ${certFile === undefined ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} is set)`,
    )
  if (host === 'localhost')
    throw new Error('HOST=localhost cannot be used with TLS_CERT_FILE: use 127.0.0.1, ::1 or 0.0.0.0')
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) }
}

/** The opt-in first-key file lives beside the SQLite database; PostgreSQL has no such place. */
export function parseFirstKeyFile(enabled: boolean, storage: StorageTarget): string | undefined {
  if (!enabled) return undefined
  if (storage.kind !== 'sqlite' || storage.file === ':memory:')
    throw new Error(
      'VERDICT_FIRST_KEY_FILE needs a SQLite database file (the key file goes beside it); otherwise the first key is shown on stderr only',
    )
  return join(dirname(resolve(storage.file)), 'verdict.first-key')
}

/** A JA4 header can only be believed from a proxy; without TRUST_PROXY it would never be read. */
export function parseJa4Header(
  header: string | undefined,
  trustProxy: TrustProxy | undefined,
): string | undefined {
  if (header === undefined) return undefined
  if (trustProxy === false)
    throw new Error('VERDICT_JA4_HEADER is honoured only from trusted proxies: set TRUST_PROXY too')
  return header.toLowerCase()
}

/**
 * Reads and validates the whole configuration (see config/schema.ts for every variable and its
 * default). The only reader of `process.env`: other modules receive what they need from here.
 */
export function loadSettings(env: Env = process.env, overrides: Env = {}): Settings {
  // Command-line options (the CLI's --database) win over the environment.
  const { values: v, problems } = readEnv({ ...env, ...overrides })
  // Variables with rules beyond the schema's; every problem is reported at once.
  const checked = <T>(parse: () => T): T | undefined => {
    try {
      return parse()
    } catch (err) {
      problems.push((err as Error).message)
      return undefined
    }
  }
  const trustProxy = checked(() => parseTrustProxy(v.TRUST_PROXY))
  const secret = checked(() => parseSecret(v.VERDICT_SECRET))
  const tls = checked(() => parseTls(v.TLS_CERT_FILE, v.TLS_KEY_FILE, v.HOST))
  const ja4Header = checked(() => parseJa4Header(v.VERDICT_JA4_HEADER, trustProxy))
  const storage = parseDatabaseUrl(v.DATABASE_URL)
  const firstKeyFile = checked(() => parseFirstKeyFile(v.VERDICT_FIRST_KEY_FILE, storage))
  if (problems.length > 0 || trustProxy === undefined) throw new Error(problems.join('; '))
  const urls = {} as FeedUrls
  for (const name of FEED_NAMES)
    urls[name] = (v as unknown as Record<string, string[]>)[feedUrlEnvVar(name)] ?? []
  return {
    host: v.HOST,
    port: v.PORT,
    trustProxy,
    storage,
    secret,
    firstKeyFile,
    logLevel: v.LOG_LEVEL,
    bodyLimitBytes: v.VERDICT_BODY_LIMIT_BYTES,
    keylessRateLimit: v.VERDICT_KEYLESS_RATE_LIMIT,
    shutdownMs: v.VERDICT_SHUTDOWN_MS,
    overload: { maxQueue: v.VERDICT_MAX_QUEUE, maxLagMs: v.VERDICT_MAX_LAG_MS },
    tenantLimits: {
      simulationsPerTenant: v.VERDICT_SIMULATIONS_PER_TENANT,
      simulatedEventsPerMinute: v.VERDICT_SIMULATED_EVENTS_PER_MINUTE,
      keysPerTenant: v.VERDICT_MAX_KEYS_PER_TENANT,
      consoleUsersPerTenant: v.VERDICT_MAX_CONSOLE_USERS_PER_TENANT,
    },
    email: {
      dnsServers: v.VERDICT_DNS_SERVERS?.length ? v.VERDICT_DNS_SERVERS : undefined,
      dnsTimeoutMs: v.VERDICT_DNS_TIMEOUT_MS,
      dnsCanary: v.VERDICT_DNS_CANARY,
      smtpProbe: v.VERDICT_SMTP_PROBE,
    },
    feeds: {
      dir: resolve(v.VERDICT_FEEDS_DIR),
      urls,
      maxBytes: v.VERDICT_FEED_MAX_BYTES,
      reloadMs: v.VERDICT_FEEDS_RELOAD_MS,
    },
    ai: resolveAiConfig({
      provider: v.VERDICT_AI_PROVIDER,
      keys: { openai: v.OPENAI_API_KEY, anthropic: v.ANTHROPIC_API_KEY },
      baseUrls: { openai: v.OPENAI_BASE_URL, anthropic: v.ANTHROPIC_BASE_URL },
      model: v.VERDICT_AI_MODEL,
      deadlineMs: v.VERDICT_AI_DEADLINE_MS,
      cacheSize: v.VERDICT_AI_CACHE_SIZE,
    }),
    cluster: {
      redisUrl: v.REDIS_URL,
      redisPrefix: v.VERDICT_REDIS_PREFIX,
      nodes: v.VERDICT_NODES,
      leaseTtlMs: v.VERDICT_LEASE_TTL_MS,
    },
    retentionDays: v.VERDICT_RETENTION_DAYS,
    tls,
    ja4Header,
    observability: {
      adminPort: v.VERDICT_ADMIN_PORT,
      metricsToken: v.VERDICT_METRICS_TOKEN,
      tenantLabels: v.VERDICT_METRICS_TENANT_LABELS,
      otlpEndpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT,
    },
    webhooks: {
      allowHttp: v.VERDICT_WEBHOOK_ALLOW_HTTP,
      allowPrivate: v.VERDICT_WEBHOOK_ALLOW_PRIVATE,
      caFile: v.VERDICT_WEBHOOK_CA_FILE === undefined ? undefined : resolve(v.VERDICT_WEBHOOK_CA_FILE),
    },
  }
}
