import type { Store } from '../../store/index.js'
import type { WebhookEndpoint } from '../../store/webhooks/endpoints.js'
import type { Claimed, Outcome } from '../../store/webhooks/outbox.js'
import type { Clock } from '../../util/clock.js'
import { mapLimit } from '../../util/pool.js'
import { send } from './sender.js'
import { signatureHeader } from './signing.js'
import { guardedLookup, type Resolve, systemResolve, type TargetPolicy } from './target.js'

/**
 * Delay before each attempt, from the message (first) or the attempt before: the Standard Webhooks
 * ecosystem's schedule. After the last one fails the delivery is marked failed.
 */
export const RETRY_SCHEDULE_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
] as const

/** Up to this share of a delay is added at random, so retries of many messages spread out. */
export const JITTER = 0.1

/** An endpoint whose every attempt failed for this long is disabled (a success in between resets it). */
export const DISABLE_AFTER_MS = 5 * 24 * 3600_000

export interface DeliveryOptions extends TargetPolicy {
  /** Trusted CAs for https (PEM); undefined: the system's. */
  ca?: string[] | undefined
  /** Name resolution (tests pass a loopback resolver). */
  resolve?: Resolve
  /** Deadline of one attempt, connection to the end of the capped body. */
  timeoutMs?: number
  /** How long a node holds a claimed delivery; longer than an attempt, so two never overlap. */
  leaseMs?: number
  /** How often a node looks for due deliveries besides the nudges of its own writes. */
  pollMs?: number
  /** Deliveries claimed at once, and sent at once, by one node. */
  batch?: number
  /** This node's name in the leases. */
  holder?: string
  /** Bytes of a response read at most. */
  maxResponseBytes?: number
  /** `user-agent` of the requests. */
  userAgent?: string
}

/** The numbers the metrics expose. */
export interface WebhookStatsView {
  delivered: number
  failed: number
  retrying: number
  /** Age of the oldest delivery not yet delivered or failed; 0 when there is none. */
  oldestUndeliveredSeconds: number
}

interface LogLike {
  warn(obj: Record<string, unknown>, msg: string): void
}

/**
 * Sends the outbox: claims due deliveries under a lease, POSTs them signed, and records each outcome
 * while it still holds the lease. At least once: a node that dies after sending and before recording
 * leaves the delivery to be sent again (same `webhook-id`) once its lease expires. Built by the app,
 * started only by server.ts; tests call `runOnce`.
 */
export class WebhookDispatcher {
  readonly policy: TargetPolicy
  readonly resolve: Resolve
  readonly #o: Required<Omit<DeliveryOptions, 'ca' | 'allowHttp' | 'allowPrivate'>> & {
    ca: string[] | undefined
  }
  #timer: NodeJS.Timeout | null = null
  #running: Promise<number> | null = null
  #again = false
  #started = false
  #stopped = false

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: DeliveryOptions,
    /** Where a failed round is reported (server.ts sets the app's logger). */
    public log: LogLike | null = null,
  ) {
    this.policy = { allowHttp: options.allowHttp, allowPrivate: options.allowPrivate }
    this.resolve = options.resolve ?? systemResolve
    const timeoutMs = options.timeoutMs ?? 10_000
    this.#o = {
      ca: options.ca,
      resolve: this.resolve,
      timeoutMs,
      leaseMs: options.leaseMs ?? timeoutMs + 20_000,
      pollMs: options.pollMs ?? 1000,
      batch: options.batch ?? 16,
      holder: options.holder ?? 'local',
      maxResponseBytes: options.maxResponseBytes ?? 64 * 1024,
      userAgent: options.userAgent ?? 'verdict-webhooks',
    }
  }

  start(): void {
    if (this.#started || this.#stopped) return
    this.#started = true
    this.#timer = setInterval(() => this.#kick(), this.#o.pollMs)
    this.#timer.unref()
    this.#kick()
  }

  /** A write queued deliveries: send them now rather than at the next poll (only once started). */
  nudge(): void {
    if (this.#started && !this.#stopped) setImmediate(() => this.#kick())
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearInterval(this.#timer)
    await this.#running?.catch(() => 0)
  }

  #kick(): void {
    if (this.#stopped) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = this.runOnce()
      .catch((err: unknown) => {
        this.log?.warn({ err }, 'webhook delivery round failed')
        return 0
      })
      .finally(() => {
        this.#running = null
        if (this.#again) {
          this.#again = false
          this.#kick()
        }
      })
  }

  /** One round: claims due deliveries and sends them; resolves with the number of attempts made. */
  async runOnce(): Promise<number> {
    const o = this.#o
    const now = this.clock.now()
    const claimed = await this.store.webhookOutbox.claim(o.holder, now, now + o.leaseMs, o.batch)
    if (claimed.length === 0) return 0
    const endpoints = await this.store.webhookEndpoints.byIds([...new Set(claimed.map((c) => c.endpointId))])
    await mapLimit(claimed, o.batch, (c) => this.#attempt(c, endpoints.get(c.endpointId)))
    return claimed.length
  }

  async #attempt(c: Claimed, endpoint: WebhookEndpoint | undefined): Promise<void> {
    if (!endpoint) return
    const o = this.#o
    const sentAt = this.clock.now()
    const secrets = [endpoint.secret]
    if (endpoint.previousSecret && (endpoint.previousUntilMs ?? 0) > sentAt)
      secrets.push(endpoint.previousSecret)
    const ts = Math.floor(sentAt / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': o.userAgent,
      'webhook-id': c.messageId,
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader(secrets, c.messageId, ts, c.payload),
    }
    const result = await send(new URL(endpoint.url), headers, c.payload, {
      lookup: guardedLookup(this.resolve, this.policy.allowPrivate),
      allowPrivate: this.policy.allowPrivate,
      ca: o.ca,
      timeoutMs: o.timeoutMs,
      maxResponseBytes: o.maxResponseBytes,
    }).catch(() => ({ status: null, error: 'request could not be made' }) as const)
    const now = this.clock.now()
    const ok = result.status !== null && result.status >= 200 && result.status < 300
    const outcome = this.#outcome(c.attempts + 1, result, now)
    const outbox = this.store.webhookOutbox
    const endpoints = this.store.webhookEndpoints
    const holder = o.holder
    await this.store.db.tx(function* () {
      if (!(yield* outbox.finish(c.id, holder, outcome, now))) return
      yield* endpoints.noteOutcome(endpoint.id, ok, now)
      const failingSince = ok ? null : (endpoint.failingSinceMs ?? now)
      if (failingSince !== null && now - failingSince >= DISABLE_AFTER_MS)
        yield* endpoints.disable(
          endpoint.id,
          `disabled after every attempt failed for ${Math.round(DISABLE_AFTER_MS / 86400_000)} days (last: ${outcome.kind === 'delivered' ? '' : outcome.error})`,
          now,
        )
    })
  }

  /** The delivery's state after its `made`-th attempt. */
  #outcome(made: number, r: { status: number | null; error?: string }, now: number): Outcome {
    if (r.status !== null && r.status >= 200 && r.status < 300) return { kind: 'delivered', status: r.status }
    const error =
      r.status === null
        ? (r.error ?? 'network error')
        : r.status >= 300 && r.status < 400
          ? `HTTP ${r.status} (redirects are not followed)`
          : `HTTP ${r.status}`
    if (made >= RETRY_SCHEDULE_MS.length) return { kind: 'failed', status: r.status, error }
    const delay = RETRY_SCHEDULE_MS[made]!
    return {
      kind: 'retry',
      status: r.status,
      error,
      nextMs: now + Math.round(delay * (1 + Math.random() * JITTER)),
    }
  }

  /** The four metrics numbers (the metrics module reads them; see docs/webhooks.md). */
  async stats(): Promise<WebhookStatsView> {
    const s = await this.store.webhookOutbox.stats()
    const now = this.clock.now()
    return {
      delivered: s.delivered,
      failed: s.failed,
      retrying: s.retrying,
      oldestUndeliveredSeconds:
        s.oldestPendingMs === null ? 0 : Math.max(0, (now - s.oldestPendingMs) / 1000),
    }
  }
}
