/** A small seeded generator (mulberry32) with the helpers the simulator needs. */
export class Rng {
  private s: number
  constructor(seed: number) {
    this.s = seed >>> 0
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0
    let t = this.s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }
  /** Picks by weight from `[item, weight]` pairs. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0)
    let r = this.next() * total
    for (const [item, w] of items) {
      r -= w
      if (r < 0) return item
    }
    return items[items.length - 1]![0]
  }
  hex(len: number): string {
    let s = ''
    for (let i = 0; i < len; i++) s += '0123456789abcdef'[this.int(16)]
    return s
  }
  chars(alphabet: string, len: number): string {
    let s = ''
    for (let i = 0; i < len; i++) s += alphabet[this.int(alphabet.length)]
    return s
  }
  /** A child generator, so one population's draws do not shift another's. */
  fork(): Rng {
    return new Rng(this.int(0x7fffffff) ^ 0x9e3779b9)
  }
}
