import type { RequestContext } from '../../context.js'
import { badRequest } from '../../errors.js'
import type { EmailAnalysis } from '../../intel/email/index.js'
import type { Intel } from '../../intel/index.js'
import { parseIp } from '../../intel/ip/normalize.js'
import { type EmailResult, emailResult } from '../../scoring/identifiers/email.js'
import { type IpResult, ipResult } from '../../scoring/identifiers/ip.js'
import { type PhoneResult, phoneResult } from '../../scoring/identifiers/phone.js'
import { EMPTY_REPUTATION, type Reputation } from '../../scoring/network-signals.js'
import type { CheckedKind, EntityKind } from '../../util/entities.js'
import { maskEmail, maskPhone } from '../../util/mask.js'

/**
 * The shared network is read only on behalf of a tenant: an anonymous caller gets zero counts and
 * `recent_abuse` false, so its fraud score rests on reference data alone and the network cannot be
 * used as a free lookup service.
 */
function reputationFor(ctx: RequestContext, kind: EntityKind, valueHash: string): Promise<Reputation> {
  if (!ctx.tenant) return Promise.resolve({ ...EMPTY_REPUTATION })
  return ctx.store.network.reputation(kind, valueHash, ctx.clock.now())
}

/** One evaluated identifier: the API payload and what the lookup history keeps (hash and hint only). */
export interface Evaluated<R, K extends CheckedKind = CheckedKind> {
  kind: K
  result: R
  reputation: Reputation
  summary: string
  warnings: string[]
  valueHash: string
  hint: string
}

/** The canonical key an email is hashed under everywhere: the canonical mailbox, else the lower-cased text. */
export function emailKey(a: EmailAnalysis, raw: string): { key: string; hint: string } {
  if (a.canonical) {
    const at = a.canonical.lastIndexOf('@')
    return { key: a.canonical, hint: maskEmail(a.canonical.slice(0, at), a.canonical.slice(at + 1)) }
  }
  return { key: raw.trim().toLowerCase(), hint: 'malformed address' }
}

/** The key a phone is hashed under everywhere: E.164 when it parses, else its digits and `+`. */
export const phoneKey = (p: { e164: string | null }, raw: string): string =>
  p.e164 ?? raw.replace(/[^\d+]/g, '')

/**
 * Every key a phone given without a country may have been hashed under: its own key (E.164 when it is
 * international, else its digits, as stored for events scored without `phone_country`), then each valid
 * E.164 reading of a national number (as stored for events scored with `phone_country`).
 */
export function phoneKeys(intel: Intel, raw: string): string[] {
  return [...new Set([phoneKey(intel.phone.analyze(raw), raw), ...intel.phone.readings(raw)])]
}

/**
 * Mail-server status of a parsed address. Well-known providers obviously receive mail, which spares a
 * DNS round trip for most traffic; everything else asks DNS (cached, with a deadline). A domain outside
 * the public DNS is `not_checked`: it is never looked up, so `email_no_mx` is not evaluated for it.
 */
export async function mxStatus(intel: Intel, a: EmailAnalysis): Promise<EmailResult['mx_status']> {
  if (a.malformed || !a.domain) return 'not_checked'
  if (a.isFreeProvider) return 'valid'
  const mx = await intel.email.mx(a.domain)
  return mx.reason === 'not_public' ? 'not_checked' : mx.status
}

export async function evaluateEmail(
  ctx: RequestContext,
  raw: string,
): Promise<Evaluated<EmailResult, 'email'>> {
  const a = ctx.intel.email.analyze(raw)
  const { key, hint } = emailKey(a, raw)
  const valueHash = ctx.hasher.entity('email', key)
  const [mx, rep] = await Promise.all([mxStatus(ctx.intel, a), reputationFor(ctx, 'email', valueHash)])
  const catchAll =
    mx === 'valid' && a.domain && !a.isFreeProvider ? await ctx.intel.email.catchAll(a.domain) : null
  const r = emailResult(a, mx, catchAll, rep)
  return { kind: 'email' as const, ...r, reputation: rep, valueHash, hint }
}

export async function evaluateIp(ctx: RequestContext, raw: string): Promise<Evaluated<IpResult, 'ip'>> {
  const ip = ctx.intel.ip.lookup(raw)
  const parsed = parseIp(raw)
  if (!ip || !parsed) throw badRequest('ip is not a valid IP address')
  const valueHash = ctx.hasher.entity('ip', parsed.ip)
  const rep = await reputationFor(ctx, 'ip', valueHash)
  return { kind: 'ip' as const, ...ipResult(ip, rep), reputation: rep, valueHash, hint: parsed.hint }
}

export async function evaluatePhone(
  ctx: RequestContext,
  raw: string,
  country?: string,
): Promise<Evaluated<PhoneResult, 'phone'>> {
  const p = ctx.intel.phone.analyze(raw, country)
  const key = phoneKey(p, raw)
  const valueHash = ctx.hasher.entity('phone', key)
  const rep = await reputationFor(ctx, 'phone', valueHash)
  const r = phoneResult(p, rep, ctx.intel.phone.disposableKnown)
  return { kind: 'phone' as const, ...r, reputation: rep, valueHash, hint: maskPhone(key) }
}
