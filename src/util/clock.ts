/** The one source of time. Every time-dependent rule reads it so tests can move time without sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.t
  }
  set(ms: number): void {
    this.t = ms
  }
  advance(ms: number): void {
    this.t += ms
  }
}
