import { createHash } from 'node:crypto'
import type { TenantContext } from '../../context.js'
import { ApiError, badRequest } from '../../errors.js'
import type { Work } from '../../store/index.js'

/** How long a key answers with its first response (Stripe's 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000
const KEY = /^[\x21-\x7e]{1,255}$/

/**
 * What a verb does with the request's key inside the transaction that records its effects: `claim`
 * first (before anything is written, so losing the key is a refusal that leaves nothing behind), then
 * `complete` with the response. Both do nothing when the request carries no key.
 */
export interface Idem {
  claim(nowMs: number): Work<void>
  /** Undoes the claim when the job refuses after it (over quota), so the refusal leaves nothing. */
  release(): Work<void>
  complete(response: unknown): Work<void>
}

export const NO_IDEM: Idem = {
  *claim() {},
  *release() {},
  *complete() {},
}

/** The key was taken by a request that committed first: the caller answers with that request's response. */
class KeyTaken extends ApiError {
  constructor() {
    super('conflict', 'this Idempotency-Key is being used by another request')
  }
}

/** The verb's response: fresh, or (replayed) the JSON of the one the same verb gave the first time. */
export interface Outcome<T> {
  replayed: boolean
  response: T
}

/** Keys and request bodies in a canonical form, so a retry with the same content matches. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** Requests in flight in this process per key: a concurrent duplicate waits for the first. */
const inFlight = new Map<string, Promise<unknown>>()

/**
 * Runs `run` at most once per (tenant, Idempotency-Key) within IDEMPOTENCY_TTL_MS: a retry with the
 * same body gets the first response back (`replayed`), with a different body a 422; a concurrent
 * duplicate waits for the first (in this process, or on PostgreSQL for the other transaction) and then
 * replays it. Only completed requests are kept: a request that fails leaves the key free.
 */
export async function idempotent<T>(
  ctx: TenantContext,
  route: string,
  header: string | string[] | undefined,
  body: unknown,
  run: (idem: Idem) => Promise<T>,
): Promise<Outcome<T>> {
  if (header === undefined) return { replayed: false, response: await run(NO_IDEM) }
  if (typeof header !== 'string' || !KEY.test(header)) {
    throw badRequest('header idempotency-key must be 1-255 printable ASCII characters')
  }
  const tenantId = ctx.tenant.id
  const keyHash = ctx.hasher
    .mac('idempotency-key', `${tenantId}\u0000${route}\u0000${header}`)
    .toString('hex')
  const requestHash = createHash('sha256')
    .update(`${route}\u0000${canonical(body)}`)
    .digest('hex')
  const slot = `${tenantId}\u0000${keyHash}`
  for (let waited = 0; ; waited++) {
    const earlier = inFlight.get(slot)
    if (earlier) await earlier.catch(() => {})
    const stored = await ctx.store.idempotency.get(tenantId, keyHash, ctx.clock.now() - IDEMPOTENCY_TTL_MS)
    if (stored) {
      if (stored.requestHash !== requestHash) {
        throw new ApiError('unprocessable', 'this Idempotency-Key was used with a different request body')
      }
      // An empty body is a claim whose transaction has not committed yet (another node, SQLite only).
      if (stored.body !== '') return { replayed: true, response: JSON.parse(stored.body) as T }
      if (waited > 50) throw new ApiError('conflict', 'a request with this Idempotency-Key is still running')
      await new Promise((r) => setTimeout(r, 20))
      continue
    }
    if (inFlight.has(slot)) continue
    let recorded: string | null = null
    const idem: Idem = {
      *claim(nowMs) {
        const ok = yield* ctx.store.idempotency.claim(
          tenantId,
          keyHash,
          requestHash,
          nowMs,
          nowMs - IDEMPOTENCY_TTL_MS,
        )
        if (!ok) throw new KeyTaken()
      },
      *release() {
        yield* ctx.store.idempotency.release(tenantId, keyHash)
      },
      *complete(response) {
        recorded = JSON.stringify(response)
        yield* ctx.store.idempotency.complete(tenantId, keyHash, recorded)
      },
    }
    const running = run(idem)
    inFlight.set(slot, running)
    try {
      const response = await running
      // The response as sent (e.g. with the AI's text, added after the commit) is what retries get;
      // written again only when it differs from the one recorded with the request.
      const sent = JSON.stringify(response)
      if (sent !== recorded) await ctx.store.idempotency.refine(tenantId, keyHash, sent).catch(() => {})
      return { replayed: false, response }
    } catch (err) {
      if (!(err instanceof KeyTaken)) throw err
      // Another process committed this key first: loop to replay its response (or refuse the body).
    } finally {
      if (inFlight.get(slot) === running) inFlight.delete(slot)
    }
  }
}
