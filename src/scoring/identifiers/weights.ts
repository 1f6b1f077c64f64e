/**
 * Weights of the single-identifier fraud scores (sum of what applies, clamped to 0-100). They are
 * stronger than the event weights because one identifier is judged alone, without the rest of an event.
 */
export const IDENTIFIER_WEIGHTS = {
  email: {
    malformed: 100,
    disposable: 75,
    noMx: 60,
    gibberish: 35,
    recentAbuse: 50,
    aliased: 10,
    catchAll: 10,
  },
  ip: { tor: 75, proxy: 70, vpn: 60, datacenter: 50, honeypot: 60, recentAbuse: 50 },
  phone: { invalid: 100, disposable: 80, voip: 50, nonPersonal: 30, recentAbuse: 50 },
} as const

export const clampScore = (n: number) => Math.min(100, Math.max(0, n))

/** "a", "a and b", "a, b and c". */
export function listPhrase(items: string[]): string {
  if (items.length <= 1) return items.join('')
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`
}

export const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
