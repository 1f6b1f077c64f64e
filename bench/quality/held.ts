/**
 * How much of what the simulator still gets wrong the interface's own rules decide: issue 27 keeps the
 * spec's codes, default weights and explicit rules, so a legitimate event that those alone put at review,
 * or an attack that carries only signals the interface forbids to block alone, is out of reach of any
 * decision of ours. Counted after the warm-up days, like the rest of the report.
 */
import { INTERFACE_CODES } from '../../src/scoring/interface-codes.js'
import { rocAuc } from './report.js'
import { DAY, START, WARMUP_DAYS } from './world.js'

/** What the report needs of a scored event here: its label, verdict and fired checks. */
export interface HeldRow {
  t: number
  label: 0 | 1
  pop: string
  score: number
  verdict: 'allow' | 'review' | 'block'
  fired: readonly { reason: string; weight: number }[]
}

/** The interface's reason codes, as against the signals verdict added. */
const INTERFACE = new Set(INTERFACE_CODES)

/**
 * Codes the interface keeps below block on their own: the browser-integrity family and device reuse.
 * `antidetect_browser` is ours, in that family, and follows its rule (docs/scoring.md).
 */
const NOT_ALONE = new Set([
  'headless_browser',
  'device_inconsistent',
  'emulated_environment',
  'noise_injected',
  'device_tampered',
  'context_mismatch',
  'engine_ua_mismatch',
  'os_mismatch',
  'timezone_mismatch',
  'known_spoof_signature',
  'antidetect_browser',
  'device_reuse',
])

/** The default review threshold; the simulator runs on defaults unless a config is passed. */
export const DEFAULT_REVIEW = 40

export interface Held {
  legit: {
    events: number
    flagged: number
    held: number
    byPop: Map<string, { flagged: number; held: number }>
  }
  /** The interface's codes behind the held legitimate flags, as sorted `a+b` combinations. */
  heldBy: Map<string, number>
  attacks: {
    events: number
    notBlocked: number
    silent: number
    notAlone: number
    /** Not blocked, not silent, not held by the rule above, with no signal of verdict's own. */
    interfaceOnly: number
    allowed: number
    allowedSilent: number
    /** Allowed with weighted signals, every one the interface's own. */
    allowedInterfaceOnly: number
  }
  /**
   * The ROC AUC if every attack with a weighted signal scored above every legitimate event: silent attacks
   * keep their score, tied with the customers they look like, so no scoring can pass this.
   */
  aucCeiling: number
}

/** A legitimate event's flag is the interface's when its codes' own weights reach review. */
function interfaceWeight(row: HeldRow): number {
  return row.fired.filter((f) => INTERFACE.has(f.reason)).reduce((s, f) => s + f.weight, 0)
}

export function heldByInterface(scored: readonly HeldRow[], review = DEFAULT_REVIEW): Held {
  const from = START + WARMUP_DAYS * DAY
  const rows = scored.filter((s) => s.t >= from)
  const legit = rows.filter((r) => r.label === 0)
  const byPop = new Map<string, { flagged: number; held: number }>()
  const heldBy = new Map<string, number>()
  let flagged = 0
  let held = 0
  for (const r of legit) {
    if (r.verdict === 'allow') continue
    flagged++
    const p = byPop.get(r.pop) ?? { flagged: 0, held: 0 }
    byPop.set(r.pop, p)
    p.flagged++
    if (interfaceWeight(r) < review) continue
    held++
    p.held++
    const codes = [...new Set(r.fired.filter((f) => INTERFACE.has(f.reason)).map((f) => f.reason))]
    const key = codes.sort().join('+')
    heldBy.set(key, (heldBy.get(key) ?? 0) + 1)
  }
  const attacks = rows.filter((r) => r.label === 1)
  const notBlocked = attacks.filter((r) => r.verdict !== 'block')
  const silent = (r: HeldRow) => r.fired.every((f) => f.weight === 0)
  const allowed = attacks.filter((r) => r.verdict === 'allow')
  const notAlone = (r: HeldRow) =>
    !silent(r) && r.fired.every((f) => f.weight === 0 || NOT_ALONE.has(f.reason))
  const onlyInterface = (r: HeldRow) =>
    !silent(r) && r.fired.every((f) => f.weight === 0 || INTERFACE.has(f.reason))
  const ceiling = rows.map((r) => ({ label: r.label, score: r.label === 1 && !silent(r) ? 101 : r.score }))
  return {
    aucCeiling: rocAuc(ceiling),
    legit: { events: legit.length, flagged, held, byPop },
    heldBy,
    attacks: {
      events: attacks.length,
      notBlocked: notBlocked.length,
      silent: notBlocked.filter(silent).length,
      notAlone: notBlocked.filter(notAlone).length,
      interfaceOnly: notBlocked.filter((r) => !notAlone(r) && onlyInterface(r)).length,
      allowed: allowed.length,
      allowedSilent: allowed.filter(silent).length,
      allowedInterfaceOnly: allowed.filter(onlyInterface).length,
    },
  }
}

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)} %`)

/** The held counts as markdown. */
export function heldMarkdown(h: Held): string {
  const a = h.attacks
  const out = [
    '| where the interface decides | events | share |',
    '|---|---|---|',
    `| legitimate events at review or above | ${h.legit.flagged} | ${pct(h.legit.flagged, h.legit.events)} of legitimate events |`,
    `| of them, put at review by the interface's own codes at their weights | ${h.legit.held} | ${pct(h.legit.held, h.legit.events)} of legitimate events |`,
    `| attack events not blocked | ${a.notBlocked} | ${pct(a.notBlocked, a.events)} of attacks |`,
    `| of them, with no weighted signal at all | ${a.silent} | ${pct(a.silent, a.events)} of attacks |`,
    `| of them, with only signals that may not block alone (device reuse, browser integrity) | ${a.notAlone} | ${pct(a.notAlone, a.events)} of attacks |`,
    `| of them, with only the interface's codes, below block at their weights | ${a.interfaceOnly} | ${pct(a.interfaceOnly, a.events)} of attacks |`,
    `| attack events allowed | ${a.allowed} | ${pct(a.allowed, a.events)} of attacks |`,
    `| of them, with no weighted signal at all | ${a.allowedSilent} | ${pct(a.allowedSilent, a.events)} of attacks |`,
    `| of them, with only the interface's codes, below review at their weights | ${a.allowedInterfaceOnly} | ${pct(a.allowedInterfaceOnly, a.events)} of attacks |`,
    `| ROC AUC if every attack with a weighted signal outscored every legitimate event | ${h.aucCeiling.toFixed(3)} | |`,
    '',
    "| legitimate population | flagged | by the interface's codes alone |",
    '|---|---|---|',
  ]
  for (const [pop, p] of [...h.legit.byPop.entries()].sort())
    out.push(`| ${pop} | ${p.flagged} | ${p.held} |`)
  out.push('', '| interface codes behind those flags | events |', '|---|---|')
  for (const [codes, n] of [...h.heldBy.entries()].sort((x, y) => y[1] - x[1]).slice(0, 8)) {
    out.push(`| ${codes} | ${n} |`)
  }
  return out.join('\n')
}
