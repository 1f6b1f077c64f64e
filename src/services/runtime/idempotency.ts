import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
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

/**
 * Stored responses are sealed (AES-256-GCM) under a key derived (HKDF) from the raw Idempotency-Key and
 * the server secret: the database holds only the key's hash, so neither it nor a backup can read a
 * response (which carries the canonical email and the device token); a retry, which brings the raw
 * key, can.
 */
const SEALED = 'v1.'

function sealingKey(ctx: TenantContext, route: string, header: string): Buffer {
  const ikm = ctx.hasher.mac('idempotency-seal', `${ctx.tenant.id}\u0000${route}\u0000${header}`)
  return Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), 'verdict idempotent response', 32))
}

function seal(key: Buffer, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
}

/** The response JSON; a row written before sealing existed (plain JSON) is read as it is. */
function unseal(key: Buffer, stored: string): string {
  if (!stored.startsWith(SEALED)) return stored
  const raw = Buffer.from(stored.slice(SEALED.length), 'base64')
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
}

/** The events a response names (score, label: `event_id`; batch: each result's), for erasure. */
function eventIdsOf(response: unknown): string[] {
  const ids: string[] = []
  const take = (v: unknown) => {
    const id = v && typeof v === 'object' ? (v as { event_id?: unknown }).event_id : undefined
    if (typeof id === 'string') ids.push(id)
  }
  take(response)
  const results =
    response && typeof response === 'object' ? (response as { results?: unknown }).results : undefined
  if (Array.isArray(results)) for (const r of results) take(r)
  return ids
}

/** Requests in flight in this process per key: a concurrent duplicate waits for the first. */
const inFlight = new Map<string, Promise<unknown>>()

/** One request's key, as the three steps below see it. */
interface Slot {
  ctx: TenantContext
  tenantId: string
  keyHash: string
  requestHash: string
  /** Seals and opens the stored response (see `seal`). */
  sealKey: Buffer
  /** The in-process map key. */
  id: string
}

/** What the look-up found: a response to replay, a claim still running elsewhere, or nothing. */
type Found<T> = { kind: 'replay'; response: T } | { kind: 'running' } | { kind: 'free' }

/*
 * How a duplicate meets the first request with the same key (the three concurrency cases):
 *
 * | case                                      | seen by                 | the duplicate                          |
 * |-------------------------------------------|-------------------------|----------------------------------------|
 * | 1. the first runs in this process         | `inFlight` (wait)       | awaits it, then looks up and replays   |
 * | 2. another process committed the key first| `claim` -> KeyTaken     | loops: looks up and replays (or 422)   |
 * | 3. another node's claim is not complete   | empty body (look up)    | polls every 20 ms, 409 after ~1 s      |
 *
 * On PostgreSQL case 2 covers a concurrent claim: the duplicate's insert waits on the first's row lock
 * and then sees it committed. Case 3 is the SQLite multi-node one (the original note: a claim whose
 * transaction has not committed yet).
 */

/** Wait: lets a request of this process holding the same key finish first. */
async function waitForLocal(slot: Slot): Promise<void> {
  const earlier = inFlight.get(slot.id)
  if (earlier) await earlier.catch(() => {})
}

/** Look up: the stored response under this key, refusing a different body. */
async function lookUp<T>(slot: Slot): Promise<Found<T>> {
  const { ctx } = slot
  const stored = await ctx.store.idempotency.get(
    slot.tenantId,
    slot.keyHash,
    ctx.clock.now() - IDEMPOTENCY_TTL_MS,
  )
  if (!stored) return { kind: 'free' }
  if (stored.requestHash !== slot.requestHash) {
    throw new ApiError('unprocessable', 'this Idempotency-Key was used with a different request body')
  }
  // An empty body is a claim whose transaction has not committed yet (another node, SQLite only).
  if (stored.body === '') return { kind: 'running' }
  return { kind: 'replay', response: JSON.parse(unseal(slot.sealKey, stored.body)) as T }
}

/**
 * Run claimed: runs the verb with an `Idem` that claims the key inside its transaction. Undefined when
 * another process committed the key first (the caller looks up again).
 */
async function runClaimed<T>(
  slot: Slot,
  run: (idem: Idem) => Promise<T>,
): Promise<{ response: T } | undefined> {
  const { ctx, tenantId, keyHash, requestHash } = slot
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
      yield* ctx.store.idempotency.complete(
        tenantId,
        keyHash,
        seal(slot.sealKey, recorded),
        eventIdsOf(response),
      )
    },
  }
  const running = run(idem)
  inFlight.set(slot.id, running)
  try {
    const response = await running
    // The response as sent (e.g. with the AI's text, added after the commit) is what retries get;
    // written again only when it differs from the one recorded with the request.
    const sent = JSON.stringify(response)
    if (sent !== recorded) {
      await ctx.store.idempotency.refine(tenantId, keyHash, seal(slot.sealKey, sent)).catch(() => {})
    }
    return { response }
  } catch (err) {
    if (err instanceof KeyTaken) return undefined
    throw err
  } finally {
    if (inFlight.get(slot.id) === running) inFlight.delete(slot.id)
  }
}

/** Polls for a claim still running elsewhere: about a second (50 x 20 ms), then a 409. */
const MAX_POLLS = 50

/**
 * Runs `run` at most once per (tenant, Idempotency-Key) within IDEMPOTENCY_TTL_MS: a retry with the
 * same body gets the first response back (`replayed`), with a different body a 422; a concurrent
 * duplicate waits for the first (see the table above) and then replays it. Only completed requests
 * are kept: a request that fails leaves the key free.
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
  const sealKey = sealingKey(ctx, route, header)
  const slot: Slot = { ctx, tenantId, keyHash, requestHash, sealKey, id: `${tenantId}\u0000${keyHash}` }
  for (let polls = 0; ; ) {
    await waitForLocal(slot)
    const found = await lookUp<T>(slot)
    if (found.kind === 'replay') return { replayed: true, response: found.response }
    if (found.kind === 'running') {
      if (polls++ > MAX_POLLS)
        throw new ApiError('conflict', 'a request with this Idempotency-Key is still running')
      await new Promise((r) => setTimeout(r, 20))
      continue
    }
    // Another request of this process took the key between the look-up and now: wait for it.
    if (inFlight.has(slot.id)) continue
    const ran = await runClaimed(slot, run)
    if (ran) return { replayed: false, response: ran.response }
  }
}
