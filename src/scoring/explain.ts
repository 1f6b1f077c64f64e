import type { Check, Verdict } from './types.js'

const VERDICT_WORDS: Record<Verdict, string> = {
  allow: 'Allowed',
  review: 'Flagged for review',
  block: 'Blocked',
}

/** Lower-cases the first letter and drops the final period so a message can sit inside a sentence. */
function clause(message: string): string {
  const m = message.replace(/\.$/, '')
  return m.charAt(0).toLowerCase() + m.slice(1)
}

function joinAnd(items: string[]): string {
  if (items.length <= 1) return items.join('')
  return `${items.slice(0, -1).join('; ')}; and ${items[items.length - 1]}`
}

/**
 * The templated plain-English explanation: the verdict and score, then the reasons strongest first.
 * Built only from our own messages, which never contain a raw identifier.
 */
export function templateExplanation(result: { score: number; verdict: Verdict; checks: Check[] }): string {
  const head = `${VERDICT_WORDS[result.verdict]} with a risk score of ${result.score}.`
  const lists = result.checks.filter((c) => c.check === 'lists')
  if (lists.length > 0 && result.checks.every((c) => c.check === 'lists' && c.weight === 0)) {
    return `${head} ${lists[0]!.message} Allowlisted entities skip every other rule.`
  }
  const ranked = [...result.checks].filter((c) => c.weight > 0).sort((a, b) => b.weight - a.weight)
  const info = result.checks.filter((c) => c.weight === 0 && c.check !== 'lists')
  if (ranked.length === 0) {
    const note = info.length > 0 ? ` Note: ${clause(info[0]!.message)}.` : ''
    return `${head} No risk signals fired.${note}`
  }
  const strongest = ranked.slice(0, 3).map((c) => clause(c.message))
  const rest = ranked.length - strongest.length
  const more = rest > 0 ? ` ${rest} weaker signal${rest === 1 ? '' : 's'} also contributed.` : ''
  const blockNote = result.checks.some((c) => c.check === 'lists' && c.weight === 100)
    ? ' A blocklist entry decides the verdict on its own.'
    : ''
  const lead = ranked.length === 1 ? 'The reason' : 'The strongest reasons'
  return `${head}${blockNote} ${lead}: ${joinAnd(strongest)}.${more}`
}
