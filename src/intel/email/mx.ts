import { promises as dns } from 'node:dns'
import { isIP } from 'node:net'
import { parse } from 'tldts'
import { normalizeDomain } from './syntax.js'

/**
 * `valid`: the domain can receive mail. `none`: it definitely cannot (NXDOMAIN, RFC 7505 null MX, or
 * neither MX nor A/AAAA). `unknown`: DNS did not give a definite answer (timeout, SERVFAIL, refused,
 * network error) or was not asked (`not_public`: a name outside the public DNS); callers must not
 * treat it as "no mail server".
 */
export type MxStatus = 'valid' | 'none' | 'unknown'

export type MxReason =
  | 'mx'
  | 'a_fallback'
  | 'aaaa_fallback'
  | 'null_mx'
  | 'nxdomain'
  | 'no_mail_host'
  | 'invalid_domain'
  | 'not_public'
  | 'timeout'
  | 'servfail'
  | 'refused'
  | 'network_error'
  | 'resolver_broken'

export interface MxResult {
  status: MxStatus
  /** Mail exchangers, best (lowest preference) first; empty unless MX records were found. */
  mx: string[]
  /** True when the domain publishes a null MX: it states it accepts no mail. */
  nullMx: boolean
  /** Set when there is no MX but the domain has an address record, which RFC 5321 uses as implicit MX. */
  fallback: 'a' | 'aaaa' | null
  reason: MxReason
}

export interface MxResolverOptions {
  /** DNS servers as `host:port` (`[v6]:port` for IPv6). Absent: the system resolver configuration. */
  servers?: string[]
  /** Budget for one DNS query, in ms. */
  timeoutMs?: number
  /** How long a definite answer (valid or none) is cached, in ms. */
  ttlMs?: number
  /** How long an `unknown` answer is cached: briefly, so a hiccup is retried soon but not per request. */
  unknownTtlMs?: number
  /** Cache bound; the least recently used domain is dropped first. */
  maxEntries?: number
  now?: () => number
  /**
   * A name that must have mail servers (VERDICT_DNS_CANARY). Before a "no mail server" answer is
   * believed, the resolver is probed with it: one that says NXDOMAIN to everything (an offline
   * deployment) would otherwise make every business domain look mailless.
   */
  canary?: string
}

/** What the last canary probe said; `unknown` before the first one. */
export interface ResolverHealth {
  status: 'ok' | 'broken' | 'unreachable' | 'unknown'
  canary: string
  checkedAt: number | null
}

/** Default canary: a domain whose MX records are as certain as DNS gets. */
export const DEFAULT_DNS_CANARY = 'gmail.com'

type Outcome =
  | { ok: true; values: string[] }
  | { ok: false; kind: 'nodata' | 'nxdomain' | 'transient'; code: string }

function classify(err: unknown): Outcome {
  const code = (err as { code?: string })?.code ?? 'UNKNOWN'
  if (code === 'ENODATA') return { ok: false, kind: 'nodata', code }
  if (code === 'ENOTFOUND') return { ok: false, kind: 'nxdomain', code }
  return { ok: false, kind: 'transient', code }
}

function transientReason(code: string): MxReason {
  if (code === 'ETIMEOUT' || code === 'ECANCELLED') return 'timeout'
  if (code === 'ESERVFAIL') return 'servfail'
  if (code === 'EREFUSED' || code === 'ECONNREFUSED') return 'refused'
  return 'network_error'
}

// Special-use names (RFC 6761, 7686, 8375) that the public suffix list nonetheless lists as ICANN.
const SPECIAL_USE_TLDS = new Set(['arpa', 'onion'])

/**
 * Whether DNS may be asked about this name: a registrable name (or a name below one) under a public
 * ICANN suffix. Internal names (`corp.internal`, `mail.localhost`, `*.lan`), suffixes alone (`co.uk`)
 * and special-use names are never looked up, so a caller cannot use MX checks to probe internal DNS.
 */
export function isPublicDnsName(name: string): boolean {
  const p = parse(name, { allowPrivateDomains: false })
  if (!p.isIcann || !p.domain || p.isIp) return false
  const tld = name.slice(name.lastIndexOf('.') + 1)
  return !SPECIAL_USE_TLDS.has(tld)
}

/** Deadline of one MX query unless configured (`VERDICT_DNS_TIMEOUT_MS`). */
export const DEFAULT_MX_TIMEOUT_MS = 1500

interface Entry {
  result: MxResult
  expires: number
}

/** MX lookups with a short per-query timeout and a bounded TTL cache. One instance per process. */
export class MxResolver {
  private readonly resolver: dns.Resolver
  private readonly timeoutMs: number
  private readonly ttlMs: number
  private readonly unknownTtlMs: number
  private readonly maxEntries: number
  private readonly now: () => number
  private readonly cache = new Map<string, Entry>()
  private readonly inflight = new Map<string, Promise<MxResult>>()
  private readonly canary: string
  private probe: { health: ResolverHealth; expires: number } | null = null
  private probing: Promise<ResolverHealth> | null = null

  constructor(options: MxResolverOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_MX_TIMEOUT_MS
    this.ttlMs = options.ttlMs ?? 10 * 60_000
    this.unknownTtlMs = Math.min(options.unknownTtlMs ?? 30_000, this.ttlMs)
    this.maxEntries = options.maxEntries ?? 10_000
    this.now = options.now ?? Date.now
    this.canary = options.canary ?? DEFAULT_DNS_CANARY
    // One try: the timeout is the whole budget of a query, not a budget per retry.
    this.resolver = new dns.Resolver({ timeout: this.timeoutMs, tries: 1 })
    if (options.servers?.length) this.resolver.setServers(options.servers)
  }

  /** Number of cached domains (for tests and metrics). */
  get cacheSize(): number {
    return this.cache.size
  }

  async check(rawDomain: string): Promise<MxResult> {
    const domain = normalizeDomain(rawDomain)
    if (!domain) return { status: 'none', mx: [], nullMx: false, fallback: null, reason: 'invalid_domain' }
    // No query at all: the answer is open, never "no mail server".
    if (!isPublicDnsName(domain)) return unknown('not_public')
    const hit = this.cache.get(domain)
    if (hit && hit.expires > this.now()) {
      // Refresh recency for the LRU bound.
      this.cache.delete(domain)
      this.cache.set(domain, hit)
      return copy(hit.result)
    }
    if (hit) this.cache.delete(domain)
    let pending = this.inflight.get(domain)
    if (!pending) {
      pending = this.lookup(domain)
        .then((result) => this.confirmed(result))
        .then((result) => {
          this.remember(domain, result)
          return result
        })
      pending.finally(() => this.inflight.delete(domain)).catch(() => {})
      this.inflight.set(domain, pending)
    }
    return copy(await pending)
  }

  /** IPv4 then IPv6 addresses of a host, through the same servers; empty when it has none or DNS fails. */
  async hostAddresses(host: string): Promise<string[]> {
    if (isIP(host)) return [host]
    // An MX of a public domain may name an internal host; that name is not looked up either.
    if (!isPublicDnsName(host)) return []
    const [v4, v6] = await Promise.all([
      this.query(() => this.resolver.resolve4(host)),
      this.query(() => this.resolver.resolve6(host)),
    ])
    return [...(v4.ok ? v4.values : []), ...(v6.ok ? v6.values : [])]
  }

  /** The resolver's health from the canary probe, probing when the cached answer has expired. */
  async resolverHealth(): Promise<ResolverHealth> {
    if (this.probe && this.probe.expires > this.now()) return { ...this.probe.health }
    this.probing ??= this.probeCanary().finally(() => {
      this.probing = null
    })
    return { ...(await this.probing) }
  }

  /** The last probe's answer without probing (`unknown` before the first). */
  lastResolverHealth(): ResolverHealth {
    return this.probe ? { ...this.probe.health } : { status: 'unknown', canary: this.canary, checkedAt: null }
  }

  private async probeCanary(): Promise<ResolverHealth> {
    const r = await this.query(() =>
      this.resolver.resolveMx(this.canary).then((x) => x.map((m) => m.exchange)),
    )
    const status = r.ok && r.values.length ? 'ok' : !r.ok && r.kind === 'transient' ? 'unreachable' : 'broken'
    const health: ResolverHealth = { status, canary: this.canary, checkedAt: this.now() }
    // A working resolver is re-checked every few minutes; a broken one soon, so a repair shows quickly.
    this.probe = { health, expires: this.now() + (status === 'ok' ? 5 * 60_000 : 30_000) }
    return health
  }

  /** A definite "no mail server" is believed only from a resolver that can resolve the canary. */
  private async confirmed(result: MxResult): Promise<MxResult> {
    if (result.status !== 'none' || result.reason === 'null_mx') return result
    const health = await this.resolverHealth()
    return health.status === 'ok' ? result : unknown('resolver_broken')
  }

  private remember(domain: string, result: MxResult): void {
    const ttl = result.status === 'unknown' ? this.unknownTtlMs : this.ttlMs
    if (ttl <= 0) return
    this.cache.set(domain, { result, expires: this.now() + ttl })
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value
      if (oldest === undefined) break
      this.cache.delete(oldest)
    }
  }

  /** Runs one query with a hard deadline on top of the resolver's own timeout. */
  private async query(run: () => Promise<string[]>): Promise<Outcome> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, kind: 'transient', code: 'ETIMEOUT' }), this.timeoutMs)
    })
    try {
      return await Promise.race([run().then((values): Outcome => ({ ok: true, values }), classify), deadline])
    } finally {
      clearTimeout(timer)
    }
  }

  private async lookup(domain: string): Promise<MxResult> {
    let records: Array<{ exchange: string; priority: number }> = []
    const mx = await this.query(async () => {
      records = await this.resolver.resolveMx(domain)
      return records.map((r) => r.exchange)
    })
    if (mx.ok) {
      // A null MX is a single record whose exchange is the root (node reports it as '').
      const usable = records
        .map((r) => ({ host: r.exchange.toLowerCase().replace(/\.$/, ''), priority: r.priority }))
        .filter((r) => r.host !== '')
        .sort((a, b) => a.priority - b.priority || a.host.localeCompare(b.host))
      if (usable.length)
        return { status: 'valid', mx: usable.map((r) => r.host), nullMx: false, fallback: null, reason: 'mx' }
      if (records.length) return { status: 'none', mx: [], nullMx: true, fallback: null, reason: 'null_mx' }
      return this.addressFallback(domain)
    }
    if (mx.kind === 'nxdomain')
      return { status: 'none', mx: [], nullMx: false, fallback: null, reason: 'nxdomain' }
    if (mx.kind === 'transient') return unknown(transientReason(mx.code))
    return this.addressFallback(domain)
  }

  /** No MX records: RFC 5321 delivers to the domain's own A/AAAA address, if it has one. */
  private async addressFallback(domain: string): Promise<MxResult> {
    const [a, aaaa] = await Promise.all([
      this.query(() => this.resolver.resolve4(domain)),
      this.query(() => this.resolver.resolve6(domain)),
    ])
    if (a.ok && a.values.length)
      return { status: 'valid', mx: [], nullMx: false, fallback: 'a', reason: 'a_fallback' }
    if (aaaa.ok && aaaa.values.length) {
      return { status: 'valid', mx: [], nullMx: false, fallback: 'aaaa', reason: 'aaaa_fallback' }
    }
    // Only a definite "nothing" on both is "none"; a failed address query leaves the answer open.
    for (const r of [a, aaaa]) if (!r.ok && r.kind === 'transient') return unknown(transientReason(r.code))
    return { status: 'none', mx: [], nullMx: false, fallback: null, reason: 'no_mail_host' }
  }
}

function unknown(reason: MxReason): MxResult {
  return { status: 'unknown', mx: [], nullMx: false, fallback: null, reason }
}

function copy(r: MxResult): MxResult {
  return { ...r, mx: [...r.mx] }
}
