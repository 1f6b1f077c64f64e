import { type AliasTrick, canonicalOf } from './canonical.js'
import { type CatchAllOptions, CatchAllProber, type CatchAllResult } from './catch-all.js'
import { type DisposableDomains, type DisposableListInfo, getDisposableDomains } from './disposable.js'
import { freeProviderCount, isFreeProvider } from './free-providers.js'
import { scoreMailbox } from './gibberish.js'
import { GIBBERISH_MODEL } from './gibberish-model.js'
import {
  DEFAULT_MX_TIMEOUT_MS,
  MxResolver,
  type MxResolverOptions,
  type MxResult,
  type ResolverHealth,
} from './mx.js'
import { emailRelayOf } from './relays.js'
import { parseEmail, type RejectReason } from './syntax.js'

export type { AliasTrick, CanonicalEmail } from './canonical.js'
export { canonicalizeEmail, hasPlusTag } from './canonical.js'
export type { CatchAllResult, CatchAllStatus } from './catch-all.js'
export type { DisposableListInfo, DisposableSource } from './disposable.js'
export type { MxReason, MxResult, MxStatus, ResolverHealth } from './mx.js'
export { EMAIL_RELAY_DOMAINS, emailRelayOf } from './relays.js'
export type { ParsedEmail, RejectReason } from './syntax.js'
export { normalizeDomain, parseEmail } from './syntax.js'

/** Everything that can be said about an address without the network. */
export interface EmailAnalysis {
  /** True when the address is unusable; rejectReason says why. */
  malformed: boolean
  rejectReason: RejectReason | null
  /** Local part as written and normalised domain; null when they could not be parsed. */
  local: string | null
  domain: string | null
  /** Identity key (aliases collapsed); null for a malformed address. */
  canonical: string | null
  isAliased: boolean
  aliasTricks: AliasTrick[]
  hasPlusTag: boolean
  isDisposable: boolean
  /** The e-mail relay service the domain belongs to (random aliases forwarding to a real mailbox), or null. */
  relay: string | null
  isFreeProvider: boolean
  looksGibberish: boolean
  /** 0..1, 0.5 on the decision threshold; 0 when the name was too short to judge. */
  gibberishScore: number
}

/** Data behind the checks, for the health endpoint. */
export interface EmailIntelSources {
  disposable: DisposableListInfo
  freeProviders: { count: number }
  gibberishModel: {
    threshold: number
    heldOutFalsePositiveRate: number
    heldOutFalseNegativeRate: number
    trainedOn: readonly string[]
  }
  mx: { servers: string[] | null; timeoutMs: number; ttlMs: number }
  catchAllProbe: { enabled: boolean }
}

/** What the rest of the service depends on; EmailIntel is the implementation. */
export interface EmailIntelligence {
  analyze(raw: string): EmailAnalysis
  mx(domain: string): Promise<MxResult>
  /** Whether the DNS resolver can resolve the canary (probed, cached); see MxResolverOptions.canary. */
  resolverHealth(): Promise<ResolverHealth>
  /** The last probe's answer, without probing. */
  lastResolverHealth(): ResolverHealth
  catchAll(domain: string): Promise<CatchAllResult>
  sources(): EmailIntelSources
}

export interface EmailIntelOptions {
  /** The server passes VERDICT_DNS_SERVERS and VERDICT_DNS_TIMEOUT_MS here (settings.email). */
  mx?: MxResolverOptions
  /** The server passes VERDICT_SMTP_PROBE here as `enabled` (settings.email.smtpProbe). */
  catchAll?: CatchAllOptions
  /** A prepared list (tests); by default the process-wide list loaded from the npm packages. */
  disposable?: DisposableDomains
}

export class EmailIntel implements EmailIntelligence {
  private readonly disposable: DisposableDomains
  private readonly resolver: MxResolver
  private readonly prober: CatchAllProber
  private readonly mxSettings: EmailIntelSources['mx']

  constructor(options: EmailIntelOptions = {}) {
    // Loaded here, once, so no request ever pays for reading 180k domains.
    this.disposable = options.disposable ?? getDisposableDomains()
    const mxOptions: MxResolverOptions = { ...options.mx }
    this.resolver = new MxResolver(mxOptions)
    this.prober = new CatchAllProber(this.resolver, { ...options.catchAll })
    this.mxSettings = {
      servers: mxOptions.servers ?? null,
      timeoutMs: mxOptions.timeoutMs ?? DEFAULT_MX_TIMEOUT_MS,
      ttlMs: mxOptions.ttlMs ?? 10 * 60_000,
    }
  }

  analyze(raw: string): EmailAnalysis {
    const parsed = parseEmail(raw)
    const canonical = parsed.ok ? canonicalOf(parsed) : null
    const domain = parsed.domain
    // A relay is never also disposable, though some disposable lists carry relay domains.
    const relay = domain ? emailRelayOf(domain) : null
    const domainFlags = domain
      ? {
          isDisposable: relay === null && this.disposable.has(domain),
          relay,
          isFreeProvider: isFreeProvider(domain),
        }
      : { isDisposable: false, relay: null, isFreeProvider: false }
    if (!parsed.ok || !canonical) {
      return {
        malformed: true,
        rejectReason: parsed.ok ? 'bad_characters' : parsed.reason,
        local: parsed.local,
        domain,
        canonical: null,
        isAliased: false,
        aliasTricks: [],
        hasPlusTag: false,
        ...domainFlags,
        looksGibberish: false,
        gibberishScore: 0,
      }
    }
    // Relay aliases are random by design: their names say nothing about who made them.
    const gibberish = relay ? { looksGibberish: false, score: 0 } : scoreMailbox(canonical.canonicalLocal)
    return {
      malformed: false,
      rejectReason: null,
      local: parsed.local,
      domain: parsed.domain,
      canonical: canonical.canonical,
      isAliased: canonical.isAliased,
      aliasTricks: canonical.aliasTricks,
      hasPlusTag: canonical.aliasTricks.includes('plus_tag'),
      ...domainFlags,
      looksGibberish: gibberish.looksGibberish,
      gibberishScore: gibberish.score,
    }
  }

  mx(domain: string): Promise<MxResult> {
    return this.resolver.check(domain)
  }

  resolverHealth(): Promise<ResolverHealth> {
    return this.resolver.resolverHealth()
  }

  lastResolverHealth(): ResolverHealth {
    return this.resolver.lastResolverHealth()
  }

  catchAll(domain: string): Promise<CatchAllResult> {
    return this.prober.check(domain)
  }

  sources(): EmailIntelSources {
    return {
      disposable: this.disposable.describe(),
      freeProviders: { count: freeProviderCount() },
      gibberishModel: {
        threshold: GIBBERISH_MODEL.threshold,
        heldOutFalsePositiveRate: GIBBERISH_MODEL.heldOut.falsePositiveRate,
        heldOutFalseNegativeRate: GIBBERISH_MODEL.heldOut.falseNegativeRate,
        trainedOn: GIBBERISH_MODEL.training.sources,
      },
      mx: { ...this.mxSettings, servers: this.mxSettings.servers ? [...this.mxSettings.servers] : null },
      catchAllProbe: { enabled: this.prober.enabled },
    }
  }
}
