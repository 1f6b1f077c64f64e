/** Tallies of scored events: per population, per attack, per customer, and the ROC AUC of the score. */
import { DAY, START, WARMUP_DAYS } from './world.js'

export interface Scored {
  t: number
  label: 0 | 1
  pop: string
  actor: string
  score: number
  verdict: 'allow' | 'review' | 'block'
  reasons: string[]
  /** Every fired check's code and weight (informational ones at 0). */
  fired: { reason: string; weight: number }[]
  /** With `--json`: the request as sent (a replayed token as `true`), the response's device and checks. */
  detail?: { sent: Record<string, unknown>; device?: Record<string, unknown>; checks?: unknown[] }
}

interface Tally {
  events: number
  review: number
  block: number
  actors: Map<string, { review: boolean; block: boolean }>
  reasons: Map<string, number>
}

function tally(): Tally {
  return { events: 0, review: 0, block: 0, actors: new Map(), reasons: new Map() }
}

/** Area under the ROC curve of `score` for label 1 against label 0 (ties count half). */
export function rocAuc(rows: readonly { label: 0 | 1; score: number }[]): number {
  const sorted = [...rows].sort((a, b) => a.score - b.score)
  let pos = 0
  let neg = 0
  let rankSum = 0
  for (let i = 0; i < sorted.length; ) {
    let j = i
    while (j < sorted.length && sorted[j]!.score === sorted[i]!.score) j++
    const avgRank = (i + 1 + j) / 2
    for (let k = i; k < j; k++) {
      if (sorted[k]!.label === 1) {
        pos++
        rankSum += avgRank
      } else neg++
    }
    i = j
  }
  if (pos === 0 || neg === 0) return Number.NaN
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg)
}

export interface Summary {
  legit: {
    events: number
    review: number
    block: number
    customers: number
    custReview: number
    custBlock: number
  }
  attack: { events: number; review: number; block: number }
  auc: number
  pops: Map<string, Tally>
  attacks: Map<string, Tally>
}

/** Only events after the warm-up days count. */
export function summarise(scored: readonly Scored[]): Summary {
  const from = START + WARMUP_DAYS * DAY
  const rows = scored.filter((s) => s.t >= from)
  const pops = new Map<string, Tally>()
  const attacks = new Map<string, Tally>()
  const legitActors = new Map<string, { review: boolean; block: boolean }>()
  for (const s of rows) {
    const m = s.label === 0 ? pops : attacks
    const t = m.get(s.pop) ?? tally()
    m.set(s.pop, t)
    const review = s.verdict !== 'allow'
    const block = s.verdict === 'block'
    t.events++
    if (review) t.review++
    if (block) t.block++
    if (review) for (const r of s.reasons) t.reasons.set(r, (t.reasons.get(r) ?? 0) + 1)
    const a = t.actors.get(s.actor) ?? { review: false, block: false }
    a.review ||= review
    a.block ||= block
    t.actors.set(s.actor, a)
    if (s.label === 0) legitActors.set(s.actor, a)
  }
  const sum = (m: Map<string, Tally>, k: 'events' | 'review' | 'block') =>
    [...m.values()].reduce((n, t) => n + t[k], 0)
  const cust = [...legitActors.values()]
  return {
    legit: {
      events: sum(pops, 'events'),
      review: sum(pops, 'review'),
      block: sum(pops, 'block'),
      customers: cust.length,
      custReview: cust.filter((a) => a.review).length,
      custBlock: cust.filter((a) => a.block).length,
    },
    attack: { events: sum(attacks, 'events'), review: sum(attacks, 'review'), block: sum(attacks, 'block') },
    auc: rocAuc(rows),
    pops,
    attacks,
  }
}

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)} %`)

function topReasons(t: Tally, n = 3): string {
  return [...t.reasons.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([r, c]) => `${r} ${c}`)
    .join(', ')
}

/** The summary as markdown tables. */
export function markdown(s: Summary, title: string): string {
  const out: string[] = [`### ${title}`, '']
  out.push('| | review or above | block |', '|---|---|---|')
  out.push(
    `| legitimate events flagged (${s.legit.events}) | ${pct(s.legit.review, s.legit.events)} | ${pct(s.legit.block, s.legit.events)} |`,
  )
  out.push(
    `| legitimate customers flagged at least once (${s.legit.customers}) | ${pct(s.legit.custReview, s.legit.customers)} | ${pct(s.legit.custBlock, s.legit.customers)} |`,
  )
  out.push(
    `| attack events caught (${s.attack.events}) | ${pct(s.attack.review, s.attack.events)} | ${pct(s.attack.block, s.attack.events)} |`,
  )
  out.push(`| ROC AUC of the score | ${s.auc.toFixed(3)} | |`, '')
  out.push(
    '| legitimate population | events | customers | review+ | block | customers review+ | top reasons when flagged |',
    '|---|---|---|---|---|---|---|',
  )
  for (const [name, t] of [...s.pops.entries()].sort()) {
    const flagged = [...t.actors.values()].filter((a) => a.review).length
    out.push(
      `| ${name} | ${t.events} | ${t.actors.size} | ${pct(t.review, t.events)} | ${pct(t.block, t.events)} | ${pct(flagged, t.actors.size)} | ${topReasons(t)} |`,
    )
  }
  out.push(
    '',
    '| attack | events | caught at review+ | at block | top reasons when caught |',
    '|---|---|---|---|---|',
  )
  for (const [name, t] of [...s.attacks.entries()].sort()) {
    out.push(
      `| ${name} | ${t.events} | ${pct(t.review, t.events)} | ${pct(t.block, t.events)} | ${topReasons(t)} |`,
    )
  }
  return out.join('\n')
}
