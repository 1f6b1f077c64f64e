import { accountRisk } from './checks/account.js'
import { deviceReuse, deviceVelocity, sessionBehaviour } from './checks/device.js'
import { deviceIntegrity } from './checks/device-integrity.js'
import { emailRisk } from './checks/email-risk.js'
import { ipRisk } from './checks/ip-risk.js'
import { listChecks } from './checks/lists.js'
import { networkRisk } from './checks/network.js'
import { timezoneCheck } from './checks/timezone.js'
import { tlsFingerprint } from './checks/tls.js'
import { velocity } from './checks/velocity.js'
import { applyRules } from './rules/apply.js'
import type { CheckFamily, EngineInput, EngineResult, Verdict } from './types.js'

/**
 * Rule families in firing order. Later signal families (device reuse, session behaviour, the operator
 * network) are added to this list; each is a pure function of the engine input.
 */
export const FAMILIES: readonly CheckFamily[] = [
  ipRisk,
  emailRisk,
  deviceIntegrity,
  tlsFingerprint,
  timezoneCheck,
  velocity,
  deviceReuse,
  deviceVelocity,
  sessionBehaviour,
  accountRisk,
  networkRisk,
]

export function verdictFor(score: number, thresholds: { review: number; block: number }): Verdict {
  if (score >= thresholds.block) return 'block'
  if (score >= thresholds.review) return 'review'
  return 'allow'
}

const clamp = (n: number) => Math.min(100, Math.max(0, n))

/**
 * Scores one event. Deterministic and free of I/O. Tenant lists win over rules: a block entry gives
 * 100/block with the other checks still listed; an allow entry (and no block entry) gives 0/allow with
 * only the allowlist check.
 */
export function score(input: EngineInput, families: readonly CheckFamily[] = FAMILIES): EngineResult {
  const blocked = listChecks(input.lists, 'block')
  const allowed = listChecks(input.lists, 'allow')
  if (allowed.length > 0 && blocked.length === 0) {
    return { score: 0, verdict: 'allow', reasons: allowed.map((c) => c.reason), checks: allowed }
  }
  const builtIn = [...blocked, ...families.flatMap((f) => f(input))]
  const builtInScore = clamp(builtIn.reduce((sum, c) => sum + c.weight, 0))
  const rules = input.config.rules ?? []
  const custom =
    rules.length > 0
      ? applyRules(input, rules, {
          reasons: builtIn.map((c) => c.reason),
          score: blocked.length > 0 ? 100 : builtInScore,
        })
      : null
  const checks = custom ? [...builtIn, ...custom.checks] : builtIn
  const total = custom ? clamp(checks.reduce((sum, c) => sum + c.weight, 0)) : builtInScore
  const s = blocked.length > 0 ? 100 : total
  let verdict = verdictFor(s, input.config.thresholds)
  // A tenant rule's verdict: review and block are floors, allow overrides the score; a block list wins.
  if (custom?.verdict && blocked.length === 0) {
    const v = custom.verdict
    if (v === 'allow' || SEVERITY[v] > SEVERITY[verdict]) verdict = v
  }
  const result: EngineResult = { score: s, verdict, reasons: checks.map((c) => c.reason), checks }
  if (custom && custom.shadow.length > 0) result.shadow = custom.shadow
  return result
}

const SEVERITY: Record<Verdict, number> = { allow: 0, review: 1, block: 2 }
