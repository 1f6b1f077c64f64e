/** The console's one way to reach the server: same origin, session cookie, CSRF header on writes. */

export interface Session {
  userId: string
  email: string
  tenantId: string
  tenantName: string
  csrfToken: string
  expiresMs: number
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

let csrf = ''
let expired: () => void = () => {}

export function useSession(s: Session | null): void {
  csrf = s?.csrfToken ?? ''
}

/** Called when the server says the session is over (401): the app goes back to sign-in. */
export function onExpired(fn: () => void): void {
  expired = fn
}

export async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {}
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-csrf-token'] = csrf
  const res = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  const data = (await res.json().catch(() => ({}))) as { error?: string; code?: string }
  // A 401 ends a session only where one was in use: not on sign-in, nor on the start-up probe for one.
  if (res.status === 401 && url !== '/console/api/sign-in' && url !== '/console/api/session') expired()
  if (!res.ok) throw new HttpError(res.status, data.code ?? 'error', data.error ?? `HTTP ${res.status}`)
  return data as T
}

export const get = <T>(url: string) => api<T>('GET', url)
export const post = <T>(url: string, body?: unknown) => api<T>('POST', url, body ?? {})

export const fmtTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19)
export const pct = (x: number | null | undefined) =>
  x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)} %`

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `?${s}` : ''
}
