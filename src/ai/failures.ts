/** Provider failures over a sliding window, and a short back-off after a run of consecutive failures. */

export const FAILURE_WINDOW_MS = 10 * 60_000
/** After this many failures in a row the provider is skipped for a while, so a dead provider costs nothing. */
export const BACKOFF_AFTER = 5
export const BACKOFF_MS = 30_000
/** Enough to count any realistic failure rate in the window without unbounded memory. */
const MAX_TRACKED = 10_000

export class FailureLog {
  readonly #now: () => number
  #times: number[] = []
  #last: { reason: string; atMs: number } | null = null
  #consecutive = 0
  #backoffUntil = 0

  constructor(now: () => number) {
    this.#now = now
  }

  record(reason: string): void {
    const at = this.#now()
    this.#times.push(at)
    if (this.#times.length > MAX_TRACKED) this.#times = this.#times.slice(-MAX_TRACKED)
    this.#last = { reason, atMs: at }
    this.#consecutive++
    if (this.#consecutive >= BACKOFF_AFTER) this.#backoffUntil = at + BACKOFF_MS
  }

  success(): void {
    this.#consecutive = 0
    this.#backoffUntil = 0
  }

  recent(): number {
    const since = this.#now() - FAILURE_WINDOW_MS
    this.#times = this.#times.filter((t) => t > since)
    return this.#times.length
  }

  last(): { reason: string; atMs: number } | null {
    return this.#last
  }

  backingOff(): boolean {
    return this.#now() < this.#backoffUntil
  }
}
