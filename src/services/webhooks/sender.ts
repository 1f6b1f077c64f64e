import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { specialPurpose } from '../../intel/ip/special-purpose.js'
import { hostOf, RefusedTarget } from './target.js'

export interface SendOptions {
  /** Resolves and checks the name at connect time (target.ts guardedLookup). */
  lookup: LookupFunction
  allowPrivate: boolean
  /** Trusted CAs for https; undefined: the system's. */
  ca: string[] | undefined
  timeoutMs: number
  /** Bytes of the response body read at most; the rest is never read. */
  maxResponseBytes: number
}

/** What one POST came to: the status when an answer arrived, else the reason. */
export type SendResult = { status: number } | { status: null; error: string }

/**
 * One POST of a webhook. No redirect is followed (a 3xx is an answer like any other non-2xx), the whole
 * exchange has one deadline, the body is read up to a cap, and a new connection is made every time, so
 * the connect-time address check always runs (an address literal is checked here: it needs no lookup).
 */
export function send(
  url: URL,
  headers: Record<string, string>,
  body: string,
  o: SendOptions,
): Promise<SendResult> {
  const host = hostOf(url)
  if (isIP(host) && !o.allowPrivate && specialPurpose(host) !== null)
    return Promise.resolve({
      status: null,
      error: new RefusedTarget('url is a special-purpose address').message,
    })
  return new Promise((resolve) => {
    let settled = false
    const done = (r: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(r)
    }
    const options = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false as const,
      lookup: o.lookup,
      ...(url.protocol === 'https:' && o.ca ? { ca: o.ca } : {}),
    }
    const onResponse = (res: IncomingMessage) => {
      let read = 0
      const status = res.statusCode ?? 0
      res.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read >= o.maxResponseBytes) {
          res.destroy()
          done({ status })
        }
      })
      res.on('end', () => done({ status }))
      res.on('error', () => done({ status }))
    }
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, options, onResponse)
        : httpRequest(url, options, onResponse)
    const timer = setTimeout(() => {
      done({ status: null, error: `no answer within ${Math.round(o.timeoutMs / 1000)} s` })
      req.destroy()
    }, o.timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) => done({ status: null, error: describe(err) }))
    req.end(body)
  })
}

/** A short reason for the deliveries list, without addresses. */
function describe(err: NodeJS.ErrnoException): string {
  if (err instanceof RefusedTarget) return err.message
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return 'host does not resolve'
  if (err.code === 'ECONNREFUSED') return 'connection refused'
  if (err.code === 'ECONNRESET') return 'connection reset'
  if (err.code === 'ETIMEDOUT') return 'connection timed out'
  if (
    err.code?.startsWith('ERR_TLS') ||
    err.code?.includes('CERT') ||
    err.code === 'DEPTH_ZERO_SELF_SIGNED_CERT'
  )
    return `TLS failure (${err.code})`
  return err.code ? `network error (${err.code})` : 'network error'
}
