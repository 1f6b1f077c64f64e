import { createHmac, randomBytes } from 'node:crypto'

/** Standard Webhooks secrets: `whsec_` and the base64 of the key bytes (here 32 random bytes). */
export const SECRET_PREFIX = 'whsec_'

export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

/**
 * The `webhook-signature` entry of one secret: `v1,` and the base64 HMAC-SHA256, keyed by the secret's
 * bytes, of `${id}.${timestamp}.${body}` (the Standard Webhooks scheme).
 */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** The header value: one signature per live secret, separated by spaces (receivers accept any). */
export function signatureHeader(secrets: readonly string[], id: string, ts: number, body: string): string {
  return secrets.map((s) => sign(s, id, ts, body)).join(' ')
}
