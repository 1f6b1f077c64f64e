import { createRequire } from 'node:module'
import { domainToASCII } from 'node:url'
import { getDomain } from 'tldts'
import { isKnownRealProvider } from './real-providers.js'

/** One upstream list, as reported by the health endpoint. */
export interface DisposableSource {
  name: string
  version: string
  license: string
  /** Usable domains this package contributed (before merging and before the real-provider guard). */
  count: number
}

export interface DisposableListInfo {
  /** Distinct disposable domains after merging and removing real providers. */
  count: number
  /** Upstream entries dropped because they name a known real provider. */
  removedAsRealProviders: number
  sources: DisposableSource[]
}

interface RawSource {
  name: string
  version: string
  license: string
  domains: Iterable<string>
}

const ASCII_DOMAIN = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/

function normalizeEntry(entry: string): string | null {
  const d = entry.trim().toLowerCase()
  if (!d.includes('.')) return null
  if (ASCII_DOMAIN.test(d)) return d
  // A few upstream entries are written in Unicode; addresses reach us in punycode.
  const ascii = domainToASCII(d)
  return ascii && ASCII_DOMAIN.test(ascii) ? ascii : null
}

/** Merged set of disposable domains, checked with subdomain matching and the real-provider guard. */
export class DisposableDomains {
  private readonly domains = new Set<string>()
  private readonly info: DisposableListInfo

  constructor(sources: RawSource[]) {
    const reported: DisposableSource[] = []
    const dropped = new Set<string>()
    for (const src of sources) {
      let count = 0
      for (const entry of src.domains) {
        const d = normalizeEntry(entry)
        if (!d) continue
        count++
        if (isKnownRealProvider(d)) {
          dropped.add(d)
          continue
        }
        this.domains.add(d)
      }
      reported.push({ name: src.name, version: src.version, license: src.license, count })
    }
    this.info = { count: this.domains.size, removedAsRealProviders: dropped.size, sources: reported }
  }

  /** Reads the three npm packages shipped with the service. Called once per process (see getDisposableDomains). */
  static fromPackages(): DisposableDomains {
    const require = createRequire(import.meta.url)
    const meta = (pkg: string): { version: string; license: string } => {
      const p = require(`${pkg}/package.json`) as { version?: string; license?: string }
      return { version: p.version ?? 'unknown', license: p.license ?? 'unknown' }
    }
    // Each package exposes its list differently: a JSON array, a JSON file beside a validator, a Set factory.
    const tompec = require('disposable-domains') as string[]
    const dahoom = require('@dahoom/disposable-email/domains.json') as string[]
    const mailchecker = (require('mailchecker') as { blacklist(): Set<string> }).blacklist()
    return new DisposableDomains([
      { name: 'disposable-domains', ...meta('disposable-domains'), domains: tompec },
      { name: '@dahoom/disposable-email', ...meta('@dahoom/disposable-email'), domains: dahoom },
      { name: 'mailchecker', ...meta('mailchecker'), domains: mailchecker },
    ])
  }

  get size(): number {
    return this.domains.size
  }

  describe(): DisposableListInfo {
    return { ...this.info, sources: this.info.sources.map((s) => ({ ...s })) }
  }

  /**
   * True when the domain or one of its parents (down to the registrable domain) is listed, so
   * `x.y.mailinator.com` matches `mailinator.com`. Matching never climbs into a public suffix:
   * an upstream entry like `edu.pl` must not condemn every Polish university.
   */
  has(domain: string): boolean {
    const d = normalizeEntry(domain)
    if (!d) return false
    const registrable = getDomain(d, { allowPrivateDomains: true }) ?? d
    let candidate = d
    for (;;) {
      if (isKnownRealProvider(candidate)) return false
      if (this.domains.has(candidate)) return true
      if (candidate.length <= registrable.length) return false
      const dot = candidate.indexOf('.')
      if (dot < 0) return false
      candidate = candidate.slice(dot + 1)
    }
  }
}

let shared: DisposableDomains | null = null

/** The process-wide list, loaded on first use and then kept. */
export function getDisposableDomains(): DisposableDomains {
  shared ??= DisposableDomains.fromPackages()
  return shared
}

export function isDisposableDomain(domain: string): boolean {
  return getDisposableDomains().has(domain)
}
