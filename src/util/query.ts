import { badRequest } from '../errors.js'

/** Converts a validated digit string to a number within bounds, naming the parameter on failure. */
export function digits(
  value: string | undefined,
  name: string,
  bounds: { fallback: number; min?: number; max?: number },
): number {
  if (value === undefined) return bounds.fallback
  const n = Number(value)
  const min = bounds.min ?? 0
  if (!Number.isSafeInteger(n)) throw badRequest(`${name} is too large`)
  if (n < min) throw badRequest(`${name} must be at least ${min}`)
  if (bounds.max !== undefined && n > bounds.max) throw badRequest(`${name} must be at most ${bounds.max}`)
  return n
}
