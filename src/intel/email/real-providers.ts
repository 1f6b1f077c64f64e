import { FREE_PROVIDER_DOMAINS } from './free-provider-domains.js'

/**
 * Real mailbox providers that are never disposable, whatever a third-party list says. Several upstream
 * lists carry false positives (zoho.com, hushmail.com, email.com, …); this guard wins over all of them.
 * It holds every free webmail domain plus paid, privacy and ISP mail services with real mailboxes.
 */
const PAID_AND_ISP: readonly string[] = [
  'fastmail.com',
  'fastmail.fm',
  'hey.com',
  'hushmail.com',
  'hush.com',
  'hush.ai',
  'runbox.com',
  'posteo.de',
  'posteo.net',
  'mailbox.org',
  'startmail.com',
  'countermail.com',
  'riseup.net',
  'pobox.com',
  't-online.de',
  'arcor.de',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'sfr.fr',
  'neuf.fr',
  'alice.it',
  'tin.it',
  'bluewin.ch',
  'telenet.be',
  'skynet.be',
  'home.nl',
  'planet.nl',
  'ziggo.nl',
  'kpnmail.nl',
  'online.no',
  'eircom.net',
  'btinternet.com',
  'sky.com',
  'virginmedia.com',
  'talktalk.net',
  'ntlworld.com',
  'blueyonder.co.uk',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'cox.net',
  'charter.net',
  'earthlink.net',
  'optonline.net',
  'frontier.com',
  'windstream.net',
  'shaw.ca',
  'rogers.com',
  'sympatico.ca',
  'telus.net',
  'videotron.ca',
  'bigpond.com',
  'bigpond.net.au',
  'optusnet.com.au',
  'iinet.net.au',
  'xtra.co.nz',
  'uol.com.br',
  'ezweb.ne.jp',
  'docomo.ne.jp',
  'softbank.ne.jp',
  'i.softbank.jp',
]

const NEVER = new Set<string>([...FREE_PROVIDER_DOMAINS, ...PAID_AND_ISP])

/** True when the domain belongs to a known real provider and must never be called disposable. */
export function isKnownRealProvider(domain: string): boolean {
  return NEVER.has(domain)
}

export function realProviderCount(): number {
  return NEVER.size
}
