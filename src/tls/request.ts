import type { FastifyRequest } from 'fastify'
import { ja4Of } from './capture.js'
import { JA4_PATTERN } from './ja4.js'

export interface Ja4Settings {
  /** Lower-cased name of the header a trusted edge puts the client's JA4 in (VERDICT_JA4_HEADER). */
  ja4Header: string | undefined
}

/**
 * The client's JA4 for one request, or null when there is none to believe.
 *
 * - Through a proxy that TRUST_PROXY trusts (Fastify walked past the socket peer, so `request.ips` holds
 *   more than it): the TLS connection verdict sees, if any, is the proxy's own, so only the edge's
 *   header counts, and only when it holds a well-formed JA4.
 * - Directly from the client: the JA4 verdict captured when it terminated that TLS connection itself.
 *   A header is ignored here, since anyone can send one.
 */
export function ja4FromRequest(
  request: Pick<FastifyRequest, 'ips' | 'headers' | 'raw'>,
  settings: Ja4Settings,
): string | null {
  if ((request.ips?.length ?? 0) > 1) {
    if (!settings.ja4Header) return null
    const value = request.headers[settings.ja4Header]
    if (typeof value !== 'string') return null
    const ja4 = value.trim()
    return JA4_PATTERN.test(ja4) ? ja4 : null
  }
  return ja4Of(request.raw.socket) ?? null
}
