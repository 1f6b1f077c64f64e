import { REASON, type ReasonCode, type WeightKeyOf } from '../reasons.js'
import type { Check } from '../types.js'

interface Firing<C extends ReasonCode> {
  /**
   * The weight key for a code with configurable weights (one of the registry's), or the code itself
   * (the key checks of once-fixed weights kept, so recorded checks replay identically), else a stable name.
   */
  key: WeightKeyOf<C> | C
  weight: number
  message: string
  evidence: Check['evidence']
}

/** One firing of `code`; its `check` name is the code's family in the registry. */
export function fire<C extends ReasonCode>(code: C, f: Firing<C>): Check {
  return {
    check: REASON[code].family,
    key: f.key,
    weight: f.weight,
    reason: code,
    message: f.message,
    evidence: f.evidence,
  }
}
