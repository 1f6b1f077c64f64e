/** A bounded least-recently-used map; Map keeps insertion order, so the first key is the oldest. */
export class Lru<V> {
  readonly #max: number
  readonly #map = new Map<string, V>()

  constructor(max: number) {
    this.#max = Math.max(0, Math.floor(max))
  }

  get size(): number {
    return this.#map.size
  }

  get capacity(): number {
    return this.#max
  }

  get(key: string): V | undefined {
    const v = this.#map.get(key)
    if (v === undefined) return undefined
    this.#map.delete(key)
    this.#map.set(key, v)
    return v
  }

  set(key: string, value: V): void {
    if (this.#max === 0) return
    this.#map.delete(key)
    this.#map.set(key, value)
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next()
      if (oldest.done) break
      this.#map.delete(oldest.value)
    }
  }
}
