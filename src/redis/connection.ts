import { Redis } from 'ioredis'

/**
 * The one connection to the shared Redis. It never queues commands while disconnected and never waits
 * long for an answer: a caller whose command fails falls back to per-node state at once, so Redis being
 * down or slow never blocks scoring.
 */
export class SharedRedis {
  readonly client: Redis
  /** Why Redis is not usable right now, for health; null while it is. */
  private lastError: string | null = 'connecting'

  constructor(
    url: string,
    /** Prefix of every key and channel, so deployments (and test runs) sharing one Redis stay apart. */
    readonly prefix: string,
    commandTimeoutMs = 100,
  ) {
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      connectTimeout: 2000,
      // Reconnect forever, backing off to once every 2 s.
      retryStrategy: (times) => Math.min(times * 100, 2000),
    })
    this.client.on('ready', () => {
      this.lastError = null
    })
    this.client.on('error', (err: Error) => {
      this.lastError = err.message || 'connection error'
    })
    this.client.on('end', () => {
      this.lastError = 'connection closed'
    })
    this.client.on('close', () => {
      if (this.lastError === null) this.lastError = 'connection lost'
    })
  }

  get ready(): boolean {
    return this.client.status === 'ready'
  }

  /** Null while Redis answers; otherwise what went wrong (health shows it). */
  get problem(): string | null {
    return this.ready ? null : (this.lastError ?? 'not connected')
  }

  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':')
  }

  async close(): Promise<void> {
    try {
      await this.client.quit()
    } catch {
      this.client.disconnect()
    }
  }
}
