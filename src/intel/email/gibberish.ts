import { GIBBERISH_MODEL } from './gibberish-model.js'

export interface GibberishResult {
  looksGibberish: boolean
  /** 0 = clearly human, 1 = clearly machine-made; 0.5 sits on the decision threshold. */
  score: number
  /** Why: `model` (letter statistics), `digit_mix` (letters and digits interleaved, or a hex identifier), or `too_short` / `no_letters` (not judged). */
  basis: 'model' | 'digit_mix' | 'too_short' | 'no_letters'
}

const K = GIBBERISH_MODEL.symbols
const TABLE = Buffer.from(GIBBERISH_MODEL.table, 'base64')
if (TABLE.length !== K * K * K) throw new Error('gibberish model table has the wrong size')

/** Fewer letters than this carry too little evidence ("jd", "bob1"): never judged. */
const MIN_LETTERS = 4
/** Letter/digit switches within one token that humans practically never produce ("a8f3k2j9"). */
const MAX_HUMAN_SWITCHES = 3
/** Long hexadecimal tokens with digits in them are identifiers (hashes, UUID pieces), not names. */
const HEX_ID = /^(?=(?:[^0-9]*[0-9]){3})(?=(?:[^a-f]*[a-f]){2})[0-9a-f]{10,}$/

// Diacritics are folded so "josé" scores like "jose"; letters outside a-z after folding are not modelled.
const FOLD: Record<string, string> = {
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  ß: 'ss',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
}

function fold(s: string): string {
  return s
    .toLowerCase()
    .replace(/[øæœßłđðþı]/g, (c) => FOLD[c] ?? c)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
}

function switches(token: string): number {
  let n = 0
  let prev: 'l' | 'd' | null = null
  for (const ch of token) {
    const kind = ch >= '0' && ch <= '9' ? 'd' : 'l'
    if (prev && kind !== prev) n++
    prev = kind
  }
  return n
}

/** Sum of ln P over the transitions of one letter run, with a boundary before and after. */
function runLogProb(run: string): number {
  let a = 0
  let b = 0
  let sum = 0
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i) - 96
    sum -= TABLE[(a * K + b) * K + c]!
    a = b
    b = c
  }
  sum -= TABLE[(a * K + b) * K]!
  return sum / GIBBERISH_MODEL.scale
}

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x))
}

/**
 * Judges whether a mailbox name (the local part, ideally without its +tag) looks machine-generated.
 * Separators (`.`, `_`, `-`, `+`) and digits split the name into letter runs that are scored by the trigram
 * model; digits themselves are not judged, except when they are interleaved with letters.
 */
export function scoreMailbox(local: string): GibberishResult {
  const text = fold(local)
  const tokens = text.split(/[^a-z0-9]+/).filter(Boolean)
  const mixed = tokens.some((t) => (t.length >= 6 && switches(t) >= MAX_HUMAN_SWITCHES) || HEX_ID.test(t))
  // "xx…xx" framing is a common human decoration (xxdarkangelxx), not part of the name.
  const runs = text
    .split(/[^a-z]+/)
    .map((r) => (r.length > 6 ? r.replace(/^xx+(?=[^x])|(?<=[^x])xx+$/g, '') : r))
    .filter(Boolean)
  const letters = runs.reduce((n, r) => n + r.length, 0)

  if (mixed) return { looksGibberish: true, score: 0.95, basis: 'digit_mix' }
  if (letters === 0) return { looksGibberish: false, score: 0, basis: 'no_letters' }
  if (letters < MIN_LETTERS) return { looksGibberish: false, score: 0, basis: 'too_short' }

  let sum = 0
  let transitions = 0
  for (const r of runs) {
    sum += runLogProb(r)
    transitions += r.length + 1
  }
  // Short names get slack: a handful of letters is weak evidence either way.
  const adjusted = sum / transitions + GIBBERISH_MODEL.slack / transitions
  const distance = (GIBBERISH_MODEL.threshold - adjusted) / GIBBERISH_MODEL.spread
  const score = Math.round(logistic(distance * 3) * 1000) / 1000
  return { looksGibberish: adjusted < GIBBERISH_MODEL.threshold, score, basis: 'model' }
}

/** Convenience: just the boolean. */
export function looksGibberish(local: string): boolean {
  return scoreMailbox(local).looksGibberish
}
