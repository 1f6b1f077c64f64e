/**
 * E-mail relay (alias) services: each address forwards to its owner's real, long-lived mailbox, and the
 * service makes its local parts random on purpose. Several disposable-domain lists carry these domains,
 * but an alias is not a throwaway inbox: the owner keeps receiving mail, and the alias is how privacy
 * features of browsers, password managers and phones sign people up. Matched on the domain or a parent
 * domain (per-user subdomains such as `name.anonaddy.com`).
 */
const RELAYS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['DuckDuckGo Email Protection', ['duck.com']],
  ['Firefox Relay', ['mozmail.com', 'relay.firefox.com']],
  [
    'SimpleLogin',
    [
      'simplelogin.com',
      'simplelogin.co',
      'simplelogin.fr',
      'aleeas.com',
      'slmail.me',
      'silomails.com',
      '8alias.com',
      '8shield.net',
    ],
  ],
  ['Sign in with Apple', ['privaterelay.appleid.com']],
  ['Proton Pass', ['passmail.net', 'passmail.com', 'passinbox.com']],
  ['addy.io', ['anonaddy.me', 'anonaddy.com', 'addy.io']],
  ['33mail', ['33mail.com']],
]

const BY_DOMAIN: ReadonlyMap<string, string> = new Map(
  RELAYS.flatMap(([service, domains]) => domains.map((d) => [d, service] as const)),
)

/** The relay service a (normalised, lower-case) mail domain belongs to, or null. */
export function emailRelayOf(domain: string): string | null {
  for (let d = domain; d.includes('.'); d = d.slice(d.indexOf('.') + 1)) {
    const service = BY_DOMAIN.get(d)
    if (service) return service
  }
  return null
}

export const EMAIL_RELAY_DOMAINS: readonly string[] = [...BY_DOMAIN.keys()]
