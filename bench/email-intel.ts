import { performance } from 'node:perf_hooks'
import { EmailIntel } from '../src/intel/email/index.js'

/** Synchronous email analysis (syntax, canonical form, disposable, free provider, gibberish); no DNS. */
export async function benchEmailIntel(checks = 100_000): Promise<{ loadMs: number; checksPerSec: number }> {
  const t0 = performance.now()
  const intel = new EmailIntel()
  const loadMs = performance.now() - t0
  const domains = ['gmail.com', 'mailinator.com', 'acme-corp.com', 'outlook.com', 'yopmail.com', 'proton.me']
  const locals = ['maria.garcia', 'xkqzvbwpjhd', 'john.doe+shop', 'j.smith87', 'a8f3k2j9', 'thecoolcat']
  const sample = Array.from(
    { length: 1000 },
    (_, i) => `${locals[i % locals.length]}${i}@${domains[i % domains.length]}`,
  )
  const t1 = performance.now()
  for (let i = 0; i < checks; i++) intel.analyze(sample[i % sample.length]!)
  return { loadMs, checksPerSec: Math.round(checks / ((performance.now() - t1) / 1000)) }
}
