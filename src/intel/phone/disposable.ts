import { readFileSync } from 'node:fs'

/**
 * Numbers that were published on public "receive SMS online" sites, where anyone can read the codes sent to
 * them. Being absent from the list says nothing: the list only knows numbers someone reported.
 */
export interface DisposableNumbers {
  /** `e164` with its leading `+`. */
  has(e164: string): boolean
  readonly entries: number
  /** Newest first-seen date in the list, `YYYY-MM-DD`. */
  readonly newest: string | null
  readonly loaded: boolean
}

/** Reads the `{ "<digits>": "<first-seen date>" }` JSON list. A missing or malformed file gives an empty list. */
export function loadDisposableNumbers(file: string): DisposableNumbers {
  const numbers = new Set<string>()
  let newest: string | null = null
  let loaded = true
  try {
    const data: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('not an object')
    for (const [digits, seen] of Object.entries(data)) {
      if (!/^\d{6,15}$/.test(digits)) continue
      numbers.add(digits)
      if (
        typeof seen === 'string' &&
        /^\d{4}-\d{2}-\d{2}$/.test(seen) &&
        (newest === null || seen > newest)
      ) {
        newest = seen
      }
    }
  } catch {
    numbers.clear()
    newest = null
    loaded = false
  }
  return {
    entries: numbers.size,
    newest,
    loaded,
    has: (e164) => numbers.has(e164.startsWith('+') ? e164.slice(1) : e164),
  }
}
