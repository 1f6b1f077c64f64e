import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EnvSchema } from '../../src/config/schema.js'
import { loadSettings, parseTrustProxy } from '../../src/config/settings.js'
import { FEED_NAMES, FEEDS, feedUrlEnvVar } from '../../src/intel/feeds/catalog.js'

const secret = 'x'.repeat(32)

describe('TRUST_PROXY parsing', () => {
  it('reads off, true (one hop), hop counts and proxy lists', () => {
    for (const off of [undefined, '', 'false', '0', 'off', 'no']) expect(parseTrustProxy(off)).toBe(false)
    for (const one of ['true', 'TRUE', 'yes', 'on', '1']) expect(parseTrustProxy(one)).toBe(1)
    expect(parseTrustProxy('2')).toBe(2)
    expect(parseTrustProxy('10.0.0.1')).toEqual(['10.0.0.1'])
    expect(parseTrustProxy(' 10.0.0.0/8 , 2001:db8::/32,loopback ')).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      'loopback',
    ])
    expect(loadSettings({ TRUST_PROXY: 'true' }).trustProxy).toBe(1)
    expect(loadSettings({}).trustProxy).toBe(false)
  })

  it('refuses anything else with a message naming the variable', () => {
    for (const bad of [
      'maybe',
      '10.0.0.0/33',
      '10.0.0.1,',
      '2001:db8::/129',
      '-1',
      '1.5',
      '10.0.0.0/8/1',
      'proxy.local',
    ]) {
      expect(() => parseTrustProxy(bad), bad).toThrow(/TRUST_PROXY/)
      expect(() => loadSettings({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/)
    }
  })
})

describe('VERDICT_SECRET strength', () => {
  it('refuses an empty or short secret, counting bytes, with a message naming the variable', () => {
    for (const bad of ['', 'short', 'x'.repeat(31), 'é'.repeat(15)]) {
      expect(() => loadSettings({ VERDICT_SECRET: bad }), JSON.stringify(bad)).toThrow(
        /VERDICT_SECRET.*32 bytes/,
      )
    }
    expect(loadSettings({ VERDICT_SECRET: secret }).secret).toBe(secret)
    // 16 two-byte characters are 32 bytes.
    expect(loadSettings({ VERDICT_SECRET: 'é'.repeat(16) }).secret).toBe('é'.repeat(16))
    expect(loadSettings({}).secret).toBeUndefined()
  })
})

describe('the cluster settings', () => {
  it('take a redis:// or rediss:// URL, and default to one process with leases and 400 days', () => {
    expect(loadSettings({}).cluster).toEqual({
      redisUrl: undefined,
      redisPrefix: 'verdict',
      nodes: 1,
      leaseTtlMs: 30_000,
    })
    expect(loadSettings({}).retentionDays).toBe(400)
    expect(loadSettings({ REDIS_URL: 'rediss://cache:6380/1' }).cluster.redisUrl).toBe(
      'rediss://cache:6380/1',
    )
    for (const bad of ['http://cache:6379', 'redis://', 'cache:6379'])
      expect(() => loadSettings({ REDIS_URL: bad }), bad).toThrow(/REDIS_URL.*redis:\/\/ or rediss:\/\//)
    expect(() => loadSettings({ VERDICT_NODES: '0' })).toThrow(/VERDICT_NODES/)
  })
})

describe('VERDICT_SHUTDOWN_MS', () => {
  it('defaults to 10 s and must be a non-negative integer', () => {
    expect(loadSettings({}).shutdownMs).toBe(10_000)
    expect(loadSettings({ VERDICT_SHUTDOWN_MS: '250' }).shutdownMs).toBe(250)
    expect(() => loadSettings({ VERDICT_SHUTDOWN_MS: 'soon' })).toThrow(/VERDICT_SHUTDOWN_MS/)
  })
})

describe('one validated configuration', () => {
  it('gives every variable its default when nothing is set', () => {
    const s = loadSettings({})
    expect(s).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      trustProxy: false,
      storage: { kind: 'sqlite', file: './data/verdict.db' },
      secret: undefined,
      logLevel: 'info',
      bodyLimitBytes: 5 * 1024 * 1024,
      keylessRateLimit: 60,
      shutdownMs: 10_000,
      email: { dnsServers: undefined, dnsTimeoutMs: 1500, smtpProbe: false },
      feeds: { dir: resolve('data/feeds'), maxBytes: 64 * 1024 * 1024, reloadMs: 60_000 },
      ai: { provider: null, deadlineMs: 1500, cacheSize: 1000 },
    })
    for (const name of FEED_NAMES) expect(s.feeds.urls[name]).toEqual([...FEEDS[name].defaultUrls])
  })

  it('reads every kind of value: numbers, on/off words, choices in any case, lists, paths', () => {
    const s = loadSettings({
      HOST: ' 0.0.0.0 ',
      PORT: '0',
      DATABASE_URL: 'postgres://db/verdict',
      LOG_LEVEL: 'WARN',
      VERDICT_SMTP_PROBE: 'on',
      VERDICT_DNS_SERVERS: '127.0.0.1:53,,[::1]:53',
      VERDICT_FEEDS_DIR: '/srv/feeds',
      VERDICT_FEED_TOR_URL: 'http://a/1\nhttp://a/2',
      VERDICT_AI_PROVIDER: 'Anthropic',
      ANTHROPIC_API_KEY: ' k ',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/',
    })
    expect(s).toMatchObject({
      host: '0.0.0.0',
      port: 0,
      storage: { kind: 'postgres', url: 'postgres://db/verdict' },
      logLevel: 'warn',
      email: { smtpProbe: true, dnsServers: ['127.0.0.1:53', '[::1]:53'] },
      feeds: { dir: '/srv/feeds', urls: { tor: ['http://a/1', 'http://a/2'] } },
      ai: { provider: 'anthropic', apiKey: 'k', baseUrl: 'http://127.0.0.1:9', model: 'claude-haiku-4-5' },
    })
  })

  it('treats a blank value as unset, except where empty means something', () => {
    const s = loadSettings({
      PORT: '',
      LOG_LEVEL: ' ',
      VERDICT_KEYLESS_RATE_LIMIT: '',
      VERDICT_FEED_VPN_URL: '',
    })
    expect([s.port, s.logLevel, s.keylessRateLimit]).toEqual([3000, 'info', 60])
    expect(s.feeds.urls.vpn).toEqual([])
    expect(() => loadSettings({ VERDICT_SECRET: '' })).toThrow(/VERDICT_SECRET/)
  })

  it('refuses a bad value naming the variable, what it allows and what it got', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'x' }, /^PORT must be an integer >= 0, got "x"$/],
      [{ PORT: '-1' }, /^PORT must be an integer >= 0, got "-1"$/],
      [{ VERDICT_BODY_LIMIT_BYTES: '10' }, /^VERDICT_BODY_LIMIT_BYTES must be an integer >= 1024, got "10"$/],
      [{ VERDICT_KEYLESS_RATE_LIMIT: '1.5' }, /VERDICT_KEYLESS_RATE_LIMIT must be an integer >= 1/],
      [{ VERDICT_FEEDS_RELOAD_MS: '5' }, /VERDICT_FEEDS_RELOAD_MS must be an integer >= 1000/],
      [{ VERDICT_DNS_TIMEOUT_MS: '10' }, /VERDICT_DNS_TIMEOUT_MS must be an integer >= 50/],
      [{ VERDICT_FEED_MAX_BYTES: '1e300' }, /VERDICT_FEED_MAX_BYTES must be an integer >= 1024/],
      [{ VERDICT_AI_DEADLINE_MS: '60001' }, /VERDICT_AI_DEADLINE_MS must be an integer from 50 to 60000/],
      [{ VERDICT_AI_CACHE_SIZE: '-1' }, /VERDICT_AI_CACHE_SIZE must be an integer from 0 to 1000000/],
      [
        { LOG_LEVEL: 'loud' },
        /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"/,
      ],
      [{ VERDICT_AI_PROVIDER: 'gemini' }, /VERDICT_AI_PROVIDER must be one of openai, anthropic, auto, off/],
      [{ VERDICT_SMTP_PROBE: 'maybe' }, /VERDICT_SMTP_PROBE must be one of 1, true, yes, on \(on\) or 0/],
      [{ OPENAI_BASE_URL: 'ftp://x' }, /OPENAI_BASE_URL must be an http\(s\) URL, got "ftp:\/\/x"/],
      [{ ANTHROPIC_BASE_URL: 'api.anthropic.com' }, /ANTHROPIC_BASE_URL must be an http\(s\) URL/],
    ]
    for (const [env, message] of cases) expect(() => loadSettings(env), JSON.stringify(env)).toThrow(message)
  })

  it('reports every bad variable at once', () => {
    expect(() =>
      loadSettings({ PORT: 'x', LOG_LEVEL: 'loud', TRUST_PROXY: 'maybe', VERDICT_SECRET: 'short' }),
    ).toThrow(/^PORT must .*; LOG_LEVEL must .*; TRUST_PROXY must .*; VERDICT_SECRET must /)
  })

  it('ignores variables it does not know', () => {
    expect(loadSettings({ VERDICT_UNKNOWN: 'x', PATH: '/bin' }).port).toBe(3000)
  })

  it('declares one URL variable per feed', () => {
    for (const name of FEED_NAMES) expect(Object.keys(EnvSchema.properties)).toContain(feedUrlEnvVar(name))
  })
})
