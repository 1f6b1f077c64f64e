import { FREE_PROVIDER_DOMAINS } from './free-provider-domains.js'

/**
 * How each large mailbox provider spells aliases of one mailbox. The canonicaliser applies exactly one rule
 * per domain: the provider's, or the generic rule for every other domain.
 * docs/intel-email.md explains why each provider is treated the way it is.
 */
export interface ProviderRule {
  /** Short provider name, for docs and debugging. */
  name: string
  /** Domain every alias domain of the same mailbox collapses to. Absent: the domain stays as written. */
  canonicalDomain?: string
  /** Separator that starts a sub-address tag (`+` nearly everywhere, `-` for Yahoo disposable addresses). */
  tagSeparator: '+' | '-'
  /** Characters the provider ignores inside the mailbox name, removed from the canonical form. */
  ignoredChars?: RegExp
  /** Characters the provider treats as the same as `-` (Yandex delivers `a.b` and `a-b` to one login). */
  dotEqualsHyphen?: boolean
  /** Provider delivers `anything@user.<domain>` to `user@<domain>` (Fastmail subdomain addressing). */
  subdomainAddressing?: boolean
}

const GMAIL: ProviderRule = {
  name: 'gmail',
  canonicalDomain: 'gmail.com',
  tagSeparator: '+',
  ignoredChars: /\./g,
}
const MICROSOFT: ProviderRule = { name: 'microsoft', tagSeparator: '+' }
const APPLE: ProviderRule = { name: 'icloud', canonicalDomain: 'icloud.com', tagSeparator: '+' }
const YAHOO: ProviderRule = { name: 'yahoo', tagSeparator: '-' }
const PROTON: ProviderRule = {
  name: 'proton',
  canonicalDomain: 'proton.me',
  tagSeparator: '+',
  ignoredChars: /[._-]/g,
}
const FASTMAIL: ProviderRule = { name: 'fastmail', tagSeparator: '+', subdomainAddressing: true }
const YANDEX: ProviderRule = {
  name: 'yandex',
  canonicalDomain: 'yandex.ru',
  tagSeparator: '+',
  dotEqualsHyphen: true,
}

/** Every other domain: only a `+tag` is removed. */
export const GENERIC_RULE: ProviderRule = { name: 'generic', tagSeparator: '+' }

const EXACT: Record<string, ProviderRule> = {
  'gmail.com': GMAIL,
  'googlemail.com': GMAIL,
  'msn.com': MICROSOFT,
  'passport.com': MICROSOFT,
  'windowslive.com': MICROSOFT,
  'icloud.com': APPLE,
  'me.com': APPLE,
  'mac.com': APPLE,
  'ymail.com': YAHOO,
  'rocketmail.com': YAHOO,
  'proton.me': PROTON,
  'protonmail.com': PROTON,
  'protonmail.ch': PROTON,
  'pm.me': PROTON,
  'fastmail.com': FASTMAIL,
  'fastmail.fm': FASTMAIL,
  'ya.ru': YANDEX,
  'narod.ru': YANDEX,
}

// Regional Microsoft and Yahoo domains come from the curated free-provider list, never from a pattern:
// `yahoo.*` would also catch look-alike domains that temp-mail services register.
for (const d of FREE_PROVIDER_DOMAINS) {
  if (EXACT[d]) continue
  if (/^(?:hotmail|outlook|live)\./.test(d)) EXACT[d] = MICROSOFT
  // Yahoo Japan is a separate company with its own address rules.
  else if (d.startsWith('yahoo.') && d !== 'yahoo.co.jp') EXACT[d] = YAHOO
}
for (const d of [
  'yandex.ru',
  'yandex.com',
  'yandex.by',
  'yandex.kz',
  'yandex.ua',
  'yandex.uz',
  'yandex.com.tr',
]) {
  EXACT[d] = YANDEX
}

/** The alias rule for a normalised (lower-case ASCII) domain. */
export function providerRule(domain: string): ProviderRule {
  return EXACT[domain] ?? GENERIC_RULE
}

/**
 * For Fastmail-style subdomain addressing: `tag@user.fastmail.com` → `{ user, base: 'fastmail.com' }`.
 * Only one extra label is accepted; deeper names are not Fastmail mailboxes.
 */
export function splitSubdomainAddress(domain: string): { user: string; base: string } | null {
  const dot = domain.indexOf('.')
  if (dot <= 0) return null
  const base = domain.slice(dot + 1)
  const rule = EXACT[base]
  if (!rule?.subdomainAddressing) return null
  return { user: domain.slice(0, dot), base }
}
