/** Model output is untrusted text; this turns it into one short plain paragraph or rejects it. */

export const MAX_EXPLANATION_CHARS = 600
const MIN_WORDS = 5

export type Sanitized = { ok: true; text: string } | { ok: false; reason: string }

// Control characters, plus zero-width and bidirectional marks that could hide or reorder text.
const INVISIBLE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g

const REFUSAL = [
  /\bI\s*(?:'|’)?\s*m\s+(?:sorry|unable|not able)\b/i,
  /\bI\s+am\s+(?:sorry|unable|not able)\b/i,
  /\bI\s+(?:can(?:'|’)?t|cannot|can not|won(?:'|’)?t|will not|do not|don(?:'|’)?t)\s+(?:help|assist|provide|comply|do that|answer|write)\b/i,
  /\bas an (?:ai|a\.i\.|language model|assistant)\b/i,
  /^(?:sorry|apologies|unfortunately)\b/i,
]

/** Anything that looks like an address, a host or a long digit run: none of it belongs in our notes. */
const IDENTIFIER_LIKE = [
  /@/,
  /\b(?:https?|ftp|mailto):/i,
  /\bwww\./i,
  /\b[a-z0-9][a-z0-9-]*\.(?:[a-z0-9-]+\.)*[a-z]{2,}\b/i, // host names such as example.com
  /\b\d{1,3}(?:\.\d{1,3}){3}\b/, // IPv4
  /\b[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}\b/i, // IPv6 (also catches clock times, harmlessly)
  /\+?\d(?:[\s().-]*\d){6,}/, // phone numbers and other long digit runs
]

/**
 * The model must not second-guess the rules. Kept narrow on purpose: "should be reviewed" is a fair
 * summary of a review verdict, "should have been allowed" is not.
 */
const QUESTIONS_VERDICT =
  /\b(?:false positive|should(?:\s+not|n't)?\s+have\s+been|(?:could|might)\s+(?:safely\s+)?be\s+(?:allowed|approved|unblocked)|reconsider|overrid(?:e|den)|overturn(?:ed)?)\b/i

/** Markup that suggests the output is not prose at all (JSON, HTML, template code). */
const NOT_PROSE = /[{}<>[\]\\|]/

function stripMarkdown(s: string): string {
  return s
    .replace(/```[a-z]*|`/gi, '')
    .replace(/^\s{0,3}(?:#{1,6}|>|[-*+•]|\d{1,2}[.)])\s+/gm, '')
    .replace(/\*\*|__|\*/g, '')
}

/** Cuts at the last sentence end within the limit, or at a word boundary with an ellipsis. */
function bound(s: string, max: number): string {
  if (s.length <= max) return s
  const head = s.slice(0, max)
  const end = Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '))
  if (end >= max / 3) return head.slice(0, end + 1)
  const space = head.lastIndexOf(' ', max - 1)
  return `${head.slice(0, space > 0 ? space : max - 1).replace(/[,;:\s]+$/, '')}…`
}

/** A reply cut short by the token limit ends mid-sentence: keep the complete sentences only. */
function completeSentences(s: string): string {
  if (/[.!?…]$/.test(s)) return s
  const end = Math.max(s.lastIndexOf('. '), s.lastIndexOf('! '), s.lastIndexOf('? '))
  return end > 0 ? s.slice(0, end + 1) : `${s}.`
}

export function sanitizeExplanation(raw: unknown, max = MAX_EXPLANATION_CHARS): Sanitized {
  if (typeof raw !== 'string') return { ok: false, reason: 'bad_response' }
  // NFKC folds look-alike characters (full-width @, ligatures) so the checks below see them.
  const unquote = (t: string) => t.trim().replace(/^["'“”‘’]+|["'“”‘’]+$/g, '')
  let s = stripMarkdown(unquote(raw.normalize('NFKC').replace(/\r\n?/g, '\n')))
  s = unquote(s.replace(INVISIBLE, ' ').replace(/\s+/g, ' ')).trim()
  if (s === '') return { ok: false, reason: 'empty_output' }
  if (REFUSAL.some((re) => re.test(s))) return { ok: false, reason: 'refusal' }
  if (IDENTIFIER_LIKE.some((re) => re.test(s))) return { ok: false, reason: 'identifier_in_output' }
  if (QUESTIONS_VERDICT.test(s)) return { ok: false, reason: 'questions_verdict' }
  if (NOT_PROSE.test(s) || (s.match(/[a-z]+/gi)?.length ?? 0) < MIN_WORDS) {
    return { ok: false, reason: 'garbage_output' }
  }
  return { ok: true, text: completeSentences(bound(s, max)) }
}
