import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { specialPurpose } from '../../intel/ip/special-purpose.js'

/** Where webhooks may go: https only unless http is allowed; public addresses only unless private are. */
export interface TargetPolicy {
  allowHttp: boolean
  allowPrivate: boolean
}

/** A refused target: the message is safe to show the tenant (no resolved address in it). */
export class RefusedTarget extends Error {}

/** Resolves every address of a name (the DNS lookup tests replace with a loopback resolver). */
export type Resolve = (host: string) => Promise<LookupAddress[]>

export const systemResolve: Resolve = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true } satisfies LookupAllOptions, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    ),
  )

const REFUSED_ADDRESS = 'resolves to a loopback, private, link-local or other special-purpose address'

/** The host of a URL as an address or name (IPv6 literals lose their brackets). */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

/** Refuses what the policy forbids in the URL itself: scheme, credentials, and an address literal. */
export function checkUrl(raw: string, policy: TargetPolicy): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new RefusedTarget('url is not a valid URL')
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    throw new RefusedTarget(
      policy.allowHttp
        ? 'url must be http or https'
        : 'url must be https (http only with VERDICT_WEBHOOK_ALLOW_HTTP=1)',
    )
  if (url.username || url.password) throw new RefusedTarget('url must not carry credentials')
  const host = hostOf(url)
  if (isIP(host) && !policy.allowPrivate && specialPurpose(host) !== null)
    throw new RefusedTarget(`url ${REFUSED_ADDRESS}`)
  return url
}

/** The creation-time check: the URL, and every address its name resolves to now. */
export async function checkTarget(raw: string, policy: TargetPolicy, resolve: Resolve): Promise<URL> {
  const url = checkUrl(raw, policy)
  const host = hostOf(url)
  if (policy.allowPrivate || isIP(host)) return url
  let addresses: LookupAddress[]
  try {
    addresses = await resolve(host)
  } catch {
    throw new RefusedTarget('url host does not resolve')
  }
  if (addresses.length === 0) throw new RefusedTarget('url host does not resolve')
  if (addresses.some((a) => specialPurpose(a.address) !== null))
    throw new RefusedTarget(`url ${REFUSED_ADDRESS}`)
  return url
}

/**
 * The `lookup` of the outbound connection: it resolves the name at connect time and refuses the whole
 * answer when any address is special-purpose, so a name that changed its answer since the endpoint was
 * created (DNS rebinding) cannot reach an internal host.
 */
export function guardedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = family ? addresses.filter((a) => a.family === family) : addresses
        if (usable.length === 0) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0)
          return
        }
        if (!allowPrivate && usable.some((a) => specialPurpose(a.address) !== null)) {
          callback(new RefusedTarget(`host ${REFUSED_ADDRESS}`), '', 0)
          return
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable)
        else callback(null, usable[0]!.address, usable[0]!.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    )
  }
}
