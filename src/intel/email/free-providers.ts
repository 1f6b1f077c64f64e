import { FREE_PROVIDER_DOMAINS } from './free-provider-domains.js'

const FREE = new Set(FREE_PROVIDER_DOMAINS)

/**
 * True when the (normalised, lower-case ASCII) domain is a free webmail provider. Exact matches only:
 * a pattern such as `yahoo.*` would also bless look-alike domains that temp-mail services register.
 */
export function isFreeProvider(domain: string): boolean {
  return FREE.has(domain.toLowerCase())
}

export function freeProviderCount(): number {
  return FREE.size
}
