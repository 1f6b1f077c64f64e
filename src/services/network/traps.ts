import type { IncomingHttpHeaders } from 'node:http'
import { parseIp } from '../../intel/ip/normalize.js'
import type { Store } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import type { Hasher } from '../../util/secrets.js'
import { clientBucket, RateLimiter } from '../runtime/rate-limiter.js'

/** Paths no legitimate client of this API ever requests; scanners and bots probe them. */
export const TRAP_PATHS = [
  '/wp-login.php',
  '/wp-admin',
  '/xmlrpc.php',
  '/.env',
  '/.git/config',
  '/.aws/credentials',
  '/phpmyadmin',
  '/admin.php',
  '/config.php',
  '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
  '/cgi-bin/luci',
  '/boaform/admin/formLogin',
] as const

/** Recorded hits per client IP (IPv6: per /64) per minute; beyond it a hit answers the same 404 unrecorded. */
export const TRAP_RECORDS_PER_IP_PER_MINUTE = 5
/** Recorded hits per minute over all callers: bounds the writes a botnet can cause. */
export const TRAP_RECORDS_PER_MINUTE = 600

/** Accept headers browsers send for images, media and style sheets (older browsers lack Sec-Fetch-*). */
const SUBRESOURCE_ACCEPT = /^\s*(image\/|video\/|audio\/|text\/css)/i

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name]
  const s = Array.isArray(v) ? v[0] : v
  return s === undefined ? undefined : s.trim().toLowerCase()
}

/** host[:port] without the scheme's default port, so `example.com:443` and `example.com` compare equal. */
function bareHost(host: string): string {
  return host.toLowerCase().replace(/:(80|443)$/, '')
}

function sameHost(url: string, host: string | undefined): boolean {
  if (!host) return false
  try {
    return bareHost(new URL(url).host) === bareHost(host)
  } catch {
    // `Origin: null`, or something no browser would send: not provably ours.
    return false
  }
}

/**
 * Why a decoy request looks like one a browser made on some page's behalf (an `<img src>`, a style
 * sheet, a cross-site form or fetch), or null for a direct request. Recording those would let any web
 * page flag its own visitors' addresses; scanners send none of these headers.
 */
export function browserInitiated(headers: IncomingHttpHeaders, host: string | undefined): string | null {
  if (header(headers, 'sec-fetch-mode') === 'no-cors') return 'sec-fetch-mode'
  const dest = header(headers, 'sec-fetch-dest')
  if (dest !== undefined && dest !== 'document' && dest !== 'empty') return 'sec-fetch-dest'
  // same-site too: a sibling subdomain may serve pages we do not control (user content, a blog).
  const site = header(headers, 'sec-fetch-site')
  if (site === 'cross-site' || site === 'same-site') return 'sec-fetch-site'
  for (const name of ['origin', 'referer']) {
    const v = header(headers, name)
    if (v !== undefined && !sameHost(v, host)) return name
  }
  const accept = header(headers, 'accept')
  if (accept !== undefined && SUBRESOURCE_ACCEPT.test(accept)) return 'accept'
  return null
}

export interface TrapRequest {
  ip: string
  path: string
  /** The Host the request was sent to, to compare Origin/Referer with. */
  host: string | undefined
  headers: IncomingHttpHeaders
}

export type TrapOutcome = 'recorded' | 'duplicate' | 'browser' | 'rate_limited' | 'no_ip'

/**
 * Records abuse-trap hits (keyed IP hash and prefix), which drive `abuse_ip` and
 * `reputation.honeypot_hits`, after filtering out browser-made requests and bounding the write rate in
 * memory. The store bounds what is kept (one hit per IP and path per hour, a per-IP cap, expiry).
 */
export class TrapRecorder {
  private readonly limiter = new RateLimiter()

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly hasher: Hasher,
  ) {}

  async record(req: TrapRequest): Promise<TrapOutcome> {
    if (browserInitiated(req.headers, req.host) !== null) return 'browser'
    const ip = parseIp(req.ip)
    if (!ip) return 'no_ip'
    const now = this.clock.now()
    if (!this.limiter.hit(`ip:${clientBucket(ip.ip)}`, TRAP_RECORDS_PER_IP_PER_MINUTE, now).allowed) {
      return 'rate_limited'
    }
    if (!this.limiter.hit('all', TRAP_RECORDS_PER_MINUTE, now).allowed) return 'rate_limited'
    const { network } = this.store
    const ipHash = this.hasher.entity('ip', ip.ip)
    const stored = await this.store.db.tx(() =>
      network.addTrapHit({ ipHash, ipPrefix: ip.prefix, path: req.path, source: 'http', atMs: now }),
    )
    return stored ? 'recorded' : 'duplicate'
  }
}
