import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { MxResolver } from './mx.js'
import { isProbeRefused, probeRecipient } from './smtp-probe.js'
import { normalizeDomain } from './syntax.js'

/**
 * `catch_all`: the server accepted a recipient that cannot exist. `rejects_unknown`: it refused that
 * recipient, so it checks mailboxes. `unknown`: no verdict (greylisting, timeout, policy block, …).
 * `not_probed`: probing is switched off (the default); `catchAll` is then false by convention, not by test.
 */
export type CatchAllStatus = 'catch_all' | 'rejects_unknown' | 'unknown' | 'not_probed'

export interface CatchAllResult {
  catchAll: boolean
  status: CatchAllStatus
  probed: boolean
  /** MX host that was asked, when one was. */
  host: string | null
  /** Reply code to RCPT TO, when the dialogue got that far. */
  code: number | null
  reason: string
}

export interface CatchAllOptions {
  /** Off unless set; the server passes `VERDICT_SMTP_PROBE` (settings.email.smtpProbe). */
  enabled?: boolean
  /** SMTP port of the MX hosts; 25 in production, a loopback port in tests. */
  port?: number
  /** Budget for the whole check (DNS plus SMTP dialogue), in ms. */
  timeoutMs?: number
  /** Cache time of a definite verdict, and of an unknown one. */
  ttlMs?: number
  unknownTtlMs?: number
  maxEntries?: number
  /** Name sent in EHLO; should be this host's public DNS name. */
  heloName?: string
  /** Permit MX hosts on loopback/private addresses (tests only). */
  allowPrivateHosts?: boolean
  now?: () => number
}

/** A mailbox name nobody has: if the server takes it, it takes everything. */
function unlikelyLocal(): string {
  return `verdict-nx-${randomBytes(8).toString('hex')}`
}

const NOT_PROBED: CatchAllResult = {
  catchAll: false,
  status: 'not_probed',
  probed: false,
  host: null,
  code: null,
  reason: 'probe_disabled',
}

/** Optional SMTP RCPT probe that tells whether a domain accepts mail for any address. */
export class CatchAllProber {
  readonly enabled: boolean
  private readonly port: number
  private readonly timeoutMs: number
  private readonly ttlMs: number
  private readonly unknownTtlMs: number
  private readonly maxEntries: number
  private readonly heloName: string
  private readonly allowPrivateHosts: boolean
  private readonly now: () => number
  private readonly cache = new Map<string, { result: CatchAllResult; expires: number }>()
  private readonly inflight = new Map<string, Promise<CatchAllResult>>()

  constructor(
    private readonly mx: MxResolver,
    options: CatchAllOptions = {},
  ) {
    this.enabled = options.enabled ?? false
    this.port = options.port ?? 25
    this.timeoutMs = options.timeoutMs ?? 3000
    this.ttlMs = options.ttlMs ?? 60 * 60_000
    this.unknownTtlMs = Math.min(options.unknownTtlMs ?? 5 * 60_000, this.ttlMs)
    this.maxEntries = options.maxEntries ?? 10_000
    this.heloName = options.heloName ?? hostname()
    this.allowPrivateHosts = options.allowPrivateHosts ?? false
    this.now = options.now ?? Date.now
  }

  async check(rawDomain: string): Promise<CatchAllResult> {
    if (!this.enabled) return { ...NOT_PROBED }
    const domain = normalizeDomain(rawDomain)
    if (!domain) return result('unknown', null, null, 'invalid_domain')
    const hit = this.cache.get(domain)
    if (hit && hit.expires > this.now()) return { ...hit.result }
    let pending = this.inflight.get(domain)
    if (!pending) {
      pending = this.probe(domain).then((r) => {
        this.remember(domain, r)
        return r
      })
      pending.finally(() => this.inflight.delete(domain)).catch(() => {})
      this.inflight.set(domain, pending)
    }
    return { ...(await pending) }
  }

  private remember(domain: string, r: CatchAllResult): void {
    this.cache.delete(domain)
    this.cache.set(domain, {
      result: r,
      expires: this.now() + (r.status === 'unknown' ? this.unknownTtlMs : this.ttlMs),
    })
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value
      if (oldest === undefined) break
      this.cache.delete(oldest)
    }
  }

  private async probe(domain: string): Promise<CatchAllResult> {
    const started = performance.now()
    const left = (): number => this.timeoutMs - (performance.now() - started)
    const mx = await this.mx.check(domain)
    if (mx.status !== 'valid') return result('unknown', null, null, `mx_${mx.status}`)
    // RFC 5321: the best MX, or the domain itself when it has only an address record.
    const host = mx.mx[0] ?? domain
    const addresses = (await this.mx.hostAddresses(host)).filter(
      (a) => this.allowPrivateHosts || !isProbeRefused(a),
    )
    const address = addresses[0]
    if (!address) return result('unknown', host, null, 'no_public_address')
    if (left() <= 0) return result('unknown', host, null, 'timeout')
    const r = await probeRecipient({
      address,
      port: this.port,
      timeoutMs: left(),
      heloName: this.heloName,
      recipient: `${unlikelyLocal()}@${domain}`,
    })
    if (r.outcome === 'accepted') return result('catch_all', host, r.code, r.reason)
    if (r.outcome === 'rejected') return result('rejects_unknown', host, r.code, r.reason)
    return result('unknown', host, r.code, r.reason)
  }
}

function result(
  status: CatchAllStatus,
  host: string | null,
  code: number | null,
  reason: string,
): CatchAllResult {
  return { catchAll: status === 'catch_all', status, probed: true, host, code, reason }
}
