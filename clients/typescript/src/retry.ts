/** How a client retries: 429 and 503 (honouring Retry-After) and network failures of safe requests. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number
  /** First backoff when the server names no Retry-After, doubled each retry (default 250 ms). */
  baseDelayMs?: number
  /** The longest wait between attempts (default 30 s): a longer Retry-After (a spent monthly quota) is not waited for. */
  maxDelayMs?: number
  /** How to wait (tests pass a recorder). */
  sleep?: (ms: number) => Promise<void>
}

const RETRIED_STATUSES = new Set([429, 503])
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE'])

/** Seconds (or an HTTP date) of a Retry-After header, in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/**
 * A fetch that sends the same Request again (the same headers, so the same Idempotency-Key) after a
 * 429 or 503, waiting what Retry-After says or an exponential backoff with jitter. A network failure
 * is retried only when repeating the request cannot count twice: a safe method, or an Idempotency-Key.
 */
export function retryingFetch(
  base: (input: Request) => Promise<Response>,
  options: RetryOptions = {},
): (input: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 3
  const baseDelay = options.baseDelayMs ?? 250
  const maxDelay = options.maxDelayMs ?? 30_000
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  return async (request: Request) => {
    const repeatable = SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key')
    for (let attempt = 0; ; attempt++) {
      const backoff = Math.min(maxDelay, baseDelay * 2 ** attempt * (0.5 + Math.random() / 2))
      let response: Response
      try {
        response = await base(request.clone())
      } catch (err) {
        if (!repeatable || attempt >= maxRetries) throw err
        await sleep(backoff)
        continue
      }
      if (!RETRIED_STATUSES.has(response.status) || attempt >= maxRetries) return response
      const told = retryAfterMs(response.headers.get('retry-after'))
      if (told !== null && told > maxDelay) return response
      await response.body?.cancel()
      await sleep(told ?? backoff)
    }
  }
}
