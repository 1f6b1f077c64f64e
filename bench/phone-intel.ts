import { performance } from 'node:perf_hooks'
import { createPhoneIntel } from '../src/intel/phone/index.js'

// A mix of notations, countries and outcomes, so the figure is not just the cheapest path.
const SAMPLE: Array<[string, string | undefined]> = [
  ['+44 7400 123456', undefined],
  ['07400 123456', 'GB'],
  ['+1 (202) 456-1111', undefined],
  ['(202) 456-1111', 'US'],
  ['+49 170 1234567', undefined],
  ['+33 6 12 34 56 78', undefined],
  ['+91 98765 43210', undefined],
  ['+55 11 91234-5678', undefined],
  ['+81 90-1234-5678', undefined],
  ['0412 345 678', 'AU'],
  ['+234 803 123 4567', undefined],
  ['0044 20 7946 0958', undefined],
  ['+44 56 1234 5678', undefined],
  ['+1 202', undefined],
  ['not a phone', undefined],
  ['+44 7700 900123', undefined],
]

/** Times loading the phone data once, then analyses `checks` numbers on the loaded instance. */
export async function benchPhoneIntel(checks = 50_000): Promise<{ loadMs: number; checksPerSec: number }> {
  const loadStart = performance.now()
  const intel = createPhoneIntel()
  const loadMs = performance.now() - loadStart

  // Warm the JIT so the rate reflects steady state.
  for (const [phone, country] of SAMPLE) intel.analyze(phone, country)

  let valid = 0
  const start = performance.now()
  for (let i = 0; i < checks; i++) {
    const [phone, country] = SAMPLE[i % SAMPLE.length]!
    if (intel.analyze(phone, country).valid) valid++
  }
  const elapsedMs = performance.now() - start
  // Using the result keeps the loop from being optimised away.
  if (valid === 0) throw new Error('benchmark sample produced no valid numbers')
  return { loadMs: Math.round(loadMs * 10) / 10, checksPerSec: Math.round(checks / (elapsedMs / 1000)) }
}
