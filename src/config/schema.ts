import { type Static, type TSchema, Type } from 'typebox'
import { DEFAULT_BASE_URLS, DEFAULT_CACHE_SIZE, DEFAULT_DEADLINE_MS } from '../ai/config.js'
import { DEFAULT_DNS_CANARY, DEFAULT_MX_TIMEOUT_MS } from '../intel/email/mx.js'
import { DEFAULT_FEED_MAX_BYTES, FEEDS, type FeedName } from '../intel/feeds/catalog.js'

/**
 * Annotations this schema adds to JSON Schema, read by config/env.ts (how a string becomes a value)
 * and by the README check (test/config/readme.test.ts).
 */
export interface EnvAnnotations {
  /** The README's default column when the default is not one literal value (`off`, `unset`…). */
  defaultText?: string
  /** What an error message says is allowed, where the schema's own words would be poor (patterns). */
  allowed?: string
  /** Lists: entries separated by commas or by whitespace. A list set to an empty string is empty. */
  separator?: ',' | 'whitespace'
  /** Taken exactly as given: not trimmed, and an empty string is a value rather than "unset". */
  verbatim?: boolean
}

const int = (minimum: number, value: number, description: string, maximum?: number) =>
  Type.Integer({ minimum, ...(maximum === undefined ? {} : { maximum }), default: value, description })

const httpUrl = (value: string, description: string) =>
  Type.String({
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://\\S+$',
    allowed: 'an http(s) URL',
    default: value,
    description,
  })

const feedUrls = (name: FeedName) =>
  Type.Array(Type.String({ minLength: 1 }), {
    default: [...FEEDS[name].defaultUrls],
    separator: 'whitespace',
    defaultText: 'upstream lists',
    description: `download URLs of the ${name} feed; set but empty turns the feed off`,
  })

const unset = (description: string, annotations: EnvAnnotations = {}) =>
  Type.Optional(Type.String({ defaultText: 'unset', ...annotations, description }))

/**
 * Every environment variable the service reads, with its type, its allowed values and its default:
 * the one description of the configuration. config/settings.ts reads the process environment against it once at
 * start (server and CLI) and refuses bad values naming the variable.
 */
export const EnvSchema = Type.Object({
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'listen address' }),
  PORT: int(0, 3000, 'listen port (0 picks a free one)'),
  DATABASE_URL: Type.String({
    minLength: 1,
    default: './data/verdict.db',
    description: 'SQLite file path (or sqlite:PATH), or a postgres:// URL',
  }),
  VERDICT_SECRET: Type.Optional(
    Type.String({
      verbatim: true,
      defaultText: 'generated (SQLite)',
      description: 'keys the personal-data hashes and signs device tokens; at least 32 bytes',
    }),
  ),
  VERDICT_FIRST_KEY_FILE: Type.Boolean({
    default: false,
    defaultText: 'off',
    description: 'also write the first-start API key to verdict.first-key beside the SQLite database (0600)',
  }),
  TRUST_PROXY: Type.Optional(
    Type.String({ defaultText: 'off', description: 'true (one hop), a hop count, or proxy addresses/CIDRs' }),
  ),
  TLS_CERT_FILE: unset(
    'PEM certificate (chain) file; with TLS_KEY_FILE, verdict serves HTTPS itself and takes the JA4 of each client',
  ),
  TLS_KEY_FILE: unset('PEM private key file of that certificate'),
  VERDICT_JA4_HEADER: Type.Optional(
    Type.String({
      pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
      allowed: 'an HTTP header name',
      defaultText: 'unset',
      description: 'header in which a trusted edge passes the client JA4 (needs TRUST_PROXY)',
    }),
  ),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'log level',
  }),
  VERDICT_SHUTDOWN_MS: int(0, 10_000, 'how long SIGTERM/SIGINT waits for running requests'),
  VERDICT_MAX_QUEUE: int(
    1,
    5_000,
    'scoring jobs waiting for storage before new requests are refused with 503',
  ),
  VERDICT_MAX_LAG_MS: int(10, 1_000, 'event-loop delay (ms) past which new requests are refused with 503'),
  VERDICT_SIMULATIONS_PER_TENANT: int(
    1,
    1,
    'config simulations one tenant may run at once (per process; 429 beyond)',
    64,
  ),
  VERDICT_SIMULATED_EVENTS_PER_MINUTE: int(
    1_000,
    500_000,
    'events one tenant may simulate per minute (per process; 429 beyond)',
  ),
  VERDICT_MAX_KEYS_PER_TENANT: int(
    1,
    50,
    'active API keys a tenant may create from the console (each has its own rate limit)',
  ),
  VERDICT_MAX_CONSOLE_USERS_PER_TENANT: int(1, 50, 'console users a tenant may add from the console'),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^[Rr][Ee][Dd][Ii][Ss][Ss]?://\\S+$',
      allowed: 'a redis:// or rediss:// URL',
      defaultText: 'unset',
      description:
        'redis:// URL of the Redis shared by several nodes (rate limits); unset: limits per process',
    }),
  ),
  VERDICT_REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9_.-]{1,64}$',
    allowed: 'letters, digits, _ . - (at most 64)',
    default: 'verdict',
    description: 'prefix of every Redis key, so deployments sharing one Redis stay apart',
  }),
  VERDICT_NODES: int(1, 1, 'nodes behind the load balancer; while Redis is down each enforces limit / nodes'),
  VERDICT_LEASE_TTL_MS: int(
    1000,
    30_000,
    "lifetime of a background-job lease; another node takes a dead holder's jobs after it",
  ),
  VERDICT_ADMIN_PORT: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      defaultText: 'off',
      description:
        'port of a second listener (on HOST) serving /metrics, /livez and /readyz, never rate limited; set, the main port serves none of them',
    }),
  ),
  VERDICT_METRICS_TOKEN: Type.Optional(
    Type.String({
      verbatim: true,
      minLength: 16,
      allowed: 'a token of at least 16 characters',
      defaultText: 'unset',
      description:
        'without VERDICT_ADMIN_PORT, /metrics on the main port answers only `Authorization: Bearer` with this token',
    }),
  ),
  VERDICT_METRICS_TENANT_LABELS: Type.Boolean({
    default: false,
    defaultText: 'off',
    description: 'adds a `tenant` label (the tenant id) to the score counters; one series per tenant',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://\\S+$',
      allowed: 'an http(s) URL',
      defaultText: 'unset',
      description: 'OTLP/HTTP collector base URL; set, spans are exported to its /v1/traces',
    }),
  ),
  VERDICT_RETENTION_DAYS: int(
    1,
    400,
    'events, observations, lookups and trap hits older than this are deleted',
  ),
  VERDICT_BODY_LIMIT_BYTES: int(1024, 5 * 1024 * 1024, 'largest request body accepted'),
  VERDICT_KEYLESS_RATE_LIMIT: int(1, 60, 'requests per minute per client IP on routes usable without a key'),
  VERDICT_DNS_SERVERS: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      separator: ',',
      defaultText: 'system resolver',
      description: 'comma-separated host:port DNS servers for MX lookups',
    }),
  ),
  VERDICT_DNS_CANARY: Type.String({
    pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$',
    allowed: 'a domain name',
    default: DEFAULT_DNS_CANARY,
    description:
      'a domain that must have mail servers: a resolver that cannot resolve it is broken and no_mx is not judged',
  }),
  VERDICT_DNS_TIMEOUT_MS: int(50, DEFAULT_MX_TIMEOUT_MS, 'deadline of one MX lookup'),
  VERDICT_SMTP_PROBE: Type.Boolean({
    default: false,
    defaultText: 'off',
    description: 'SMTP RCPT probe behind catch_all',
  }),
  VERDICT_WEBHOOK_ALLOW_HTTP: Type.Boolean({
    default: false,
    defaultText: 'off',
    description: 'webhook URLs may be plain http (development only)',
  }),
  VERDICT_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    defaultText: 'off',
    description: 'webhooks may go to loopback, private, link-local and special-purpose addresses',
  }),
  VERDICT_WEBHOOK_CA_FILE: unset(
    'PEM file of CA certificates trusted for webhook https, beside the system ones',
  ),
  VERDICT_FEEDS_DIR: Type.String({
    minLength: 1,
    default: './data/feeds',
    description: 'where feeds are stored',
  }),
  VERDICT_FEED_TOR_URL: feedUrls('tor'),
  VERDICT_FEED_RELAY_URL: feedUrls('relay'),
  VERDICT_FEED_VPN_URL: feedUrls('vpn'),
  VERDICT_FEED_VPN_ASN_URL: feedUrls('vpn-asn'),
  VERDICT_FEED_PROXY_URL: feedUrls('proxy'),
  VERDICT_FEED_PROXY_ASN_URL: feedUrls('proxy-asn'),
  VERDICT_FEED_DATACENTER_URL: feedUrls('datacenter'),
  VERDICT_FEED_MAX_BYTES: int(1024, DEFAULT_FEED_MAX_BYTES, 'largest download accepted from one feed URL'),
  VERDICT_FEEDS_RELOAD_MS: int(1000, 60_000, 'how often the server looks for refreshed feed files'),
  OPENAI_API_KEY: unset('key of an OpenAI-compatible chat-completions endpoint'),
  OPENAI_BASE_URL: httpUrl(DEFAULT_BASE_URLS.openai, 'base URL of that endpoint'),
  ANTHROPIC_API_KEY: unset("key of Anthropic's messages API"),
  ANTHROPIC_BASE_URL: httpUrl(DEFAULT_BASE_URLS.anthropic, "base URL of Anthropic's messages API"),
  VERDICT_AI_PROVIDER: Type.Enum(['openai', 'anthropic', 'auto', 'off', 'none'], {
    default: 'auto',
    description: 'which AI provider explains scores (auto: OpenAI first when both keys are set)',
  }),
  VERDICT_AI_MODEL: unset('model name', { defaultText: 'per provider' }),
  VERDICT_AI_DEADLINE_MS: int(50, DEFAULT_DEADLINE_MS, 'longest wait for an AI explanation', 60_000),
  VERDICT_AI_CACHE_SIZE: int(0, DEFAULT_CACHE_SIZE, 'explanations cached by pattern', 1_000_000),
})

export type EnvValues = Static<typeof EnvSchema>
export type EnvName = keyof EnvValues

type VarSchema = TSchema & EnvAnnotations & { default?: unknown }

/** One variable's schema with this module's annotations. */
export function envVar(name: string): VarSchema | undefined {
  return (EnvSchema.properties as Record<string, VarSchema>)[name]
}

/** The default of a variable, for code that has to fall back to it (buildApp without settings). */
export function envDefault<K extends EnvName>(name: K): EnvValues[K] {
  return (EnvSchema.properties[name] as { default?: EnvValues[K] }).default as EnvValues[K]
}
