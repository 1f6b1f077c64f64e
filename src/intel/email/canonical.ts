import { providerRule, splitSubdomainAddress } from './provider-rules.js'
import { type ParsedEmail, parseEmail } from './syntax.js'

/**
 * Ways an address re-spells a mailbox. Any sub-address tag counts as `plus_tag`, whatever its separator
 * (`+`, Yahoo's `-`, Fastmail's subdomain), so consumers meet one closed vocabulary.
 */
export type AliasTrick = 'plus_tag' | 'dot_trick' | 'domain_alias'

export interface CanonicalEmail {
  /** `canonicalLocal@canonicalDomain`: the identity key hashed for storage, lists, scoring and erasure. */
  canonical: string
  /** Local part as written (trimmed, case kept); for display hints only. */
  local: string
  /** Domain as written, normalised to lower-case ASCII. */
  domain: string
  /** Local part after removing tags and provider-ignored characters, lower-cased. */
  canonicalLocal: string
  /** Domain after collapsing alternate domains of one provider (googlemail.com → gmail.com). */
  canonicalDomain: string
  /** True when the address differs from its canonical form in a way that reaches the same inbox. */
  isAliased: boolean
  /** Tricks found, in a fixed order: plus_tag, dot_trick, domain_alias. */
  aliasTricks: AliasTrick[]
}

const TRICK_ORDER: readonly AliasTrick[] = ['plus_tag', 'dot_trick', 'domain_alias']

/**
 * The one canonicaliser of the product. Returns null for an address that does not parse.
 * Case is folded for the whole address: every large provider treats mailbox names case-insensitively,
 * and a key that changed with capitalisation would split one person into several.
 */
export function canonicalizeEmail(raw: string): CanonicalEmail | null {
  const parsed = parseEmail(raw)
  return parsed.ok ? canonicalOf(parsed) : null
}

/** The canonical form of an address parseEmail accepted (analysis parses once and canonicalises that). */
export function canonicalOf(parsed: Extract<ParsedEmail, { ok: true }>): CanonicalEmail {
  const tricks = new Set<AliasTrick>()
  let local = parsed.local.normalize('NFC').toLowerCase()
  let domain = parsed.domain

  const sub = splitSubdomainAddress(domain)
  if (sub) {
    // tag@user.fastmail.com reaches user@fastmail.com; the written local part is the tag.
    local = sub.user
    domain = sub.base
    tricks.add('plus_tag')
  }

  const rule = providerRule(domain)
  const tagAt = local.indexOf(rule.tagSeparator)
  // A tag needs a non-empty base in front of it; `+x@` is a mailbox literally named so.
  if (tagAt > 0) {
    local = local.slice(0, tagAt)
    tricks.add('plus_tag')
  }
  if (rule.ignoredChars) {
    const stripped = local.replace(rule.ignoredChars, '')
    if (stripped && stripped !== local) {
      local = stripped
      tricks.add('dot_trick')
    }
  }
  if (rule.dotEqualsHyphen && local.includes('.')) {
    local = local.replaceAll('.', '-')
    tricks.add('dot_trick')
  }
  const canonicalDomain = rule.canonicalDomain ?? domain
  if (canonicalDomain !== parsed.domain) tricks.add('domain_alias')

  const aliasTricks = TRICK_ORDER.filter((t) => tricks.has(t))
  return {
    canonical: `${local}@${canonicalDomain}`,
    local: parsed.local,
    domain: parsed.domain,
    canonicalLocal: local,
    canonicalDomain,
    isAliased: aliasTricks.length > 0,
    aliasTricks,
  }
}

/** True when the address carries a sub-address tag that the canonicaliser removes. */
export function hasPlusTag(raw: string): boolean {
  return canonicalizeEmail(raw)?.aliasTricks.includes('plus_tag') ?? false
}
