import { describeReason, safeReasonCode } from './reasons.js'
import type { ExplainCheck, ExplanationInput } from './types.js'

/**
 * The privacy boundary. `Facts` is everything the model may learn about an event, and it is also the
 * cache key: a cached text was written from exactly these facts, so it fits every input that maps here.
 */
export interface Facts {
  verdict: ExplanationInput['verdict']
  thresholds: { review: number; block: number }
  /** The score as a band of ten ("70-79"): exact scores would split the cache for no gain in prose. */
  scoreBand: string
  /** Strongest first; ties ordered by code so input order never changes the key. */
  signals: Signal[]
}

export interface Signal {
  reason: string
  weight: number
  /** Only booleans and bucketed numbers, as [key, value] sorted by key. */
  evidence: [string, string | boolean][]
}

const MAX_SIGNALS = 20
const MAX_EVIDENCE = 8

/** Our evidence keys are lower snake case; a key of any other shape is not ours, so it is dropped. */
const KEY_SHAPE = /^[a-z][a-z0-9_]{0,39}$/
/** Numbers that identify rather than measure (network numbers, ids, ports, coordinates) stay out. */
const IDENTIFYING_KEY = /(^|_)(asn|id|ip|phone|port|hash|lat|lng|lon|latitude|longitude|zip|postcode)(_|$)/
/** Config-like numbers with few distinct values; bucketing them would only blur the prose. */
const EXACT_KEY = /(^|_)(threshold|min|max|window|minutes|hours|days|tier)(_|$)/
/** Beyond this a "number" is more likely a phone number or packed address than a measurement. */
const MAX_MAGNITUDE = 1_000_000

function countBucket(n: number): string {
  if (n <= 1) return String(n)
  if (n <= 4) return '2-4'
  if (n <= 9) return '5-9'
  if (n <= 19) return '10-19'
  return '20+'
}

function tensBand(n: number): string {
  const lo = Math.min(90, Math.max(0, Math.floor(n / 10) * 10))
  return lo === 90 ? '90-100' : `${lo}-${lo + 9}`
}

function tenthsBand(n: number): string {
  const lo = Math.min(0.9, Math.floor(n * 10) / 10)
  return `${lo.toFixed(1)}-${(lo + 0.1).toFixed(1)}`
}

/** Returns the prompt-safe form of one evidence value, or null when it must not be sent. */
export function bucketEvidence(key: string, value: unknown): string | boolean | null {
  if (!KEY_SHAPE.test(key) || IDENTIFYING_KEY.test(key)) return null
  if (typeof value === 'boolean') return value
  // Strings, string lists and nulls are dropped whatever they hold: they are where identifiers live.
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) >= MAX_MAGNITUDE) return null
  if (EXACT_KEY.test(key) && Number.isInteger(value)) return String(value)
  if (/score$/.test(key) && value >= 0 && value <= 1) return tenthsBand(value)
  if (/score$/.test(key) && value >= 0 && value <= 100) return tensBand(value)
  if (Number.isInteger(value) && value >= 0) return countBucket(value)
  if (value >= 0 && value <= 1) return tenthsBand(value)
  return String(Number(value.toPrecision(2)))
}

function toSignal(check: ExplainCheck): Signal {
  const evidence: [string, string | boolean][] = []
  const raw = check.evidence && typeof check.evidence === 'object' ? check.evidence : {}
  for (const key of Object.keys(raw).sort()) {
    const v = bucketEvidence(key, raw[key])
    if (v !== null) evidence.push([key, v])
  }
  const weight = Number.isFinite(check.weight) ? Math.round(check.weight * 10) / 10 : 0
  return { reason: safeReasonCode(String(check.reason)), weight, evidence: evidence.slice(0, MAX_EVIDENCE) }
}

function compareSignals(a: Signal, b: Signal): number {
  if (a.weight !== b.weight) return b.weight - a.weight
  if (a.reason !== b.reason) return a.reason < b.reason ? -1 : 1
  const ea = JSON.stringify(a.evidence)
  const eb = JSON.stringify(b.evidence)
  return ea < eb ? -1 : ea > eb ? 1 : 0
}

const VERDICTS = new Set(['allow', 'review', 'block'])

function int0to100(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) ? Math.min(100, Math.max(0, Math.round(n))) : 0
}

export function toFacts(input: ExplanationInput): Facts {
  if (!VERDICTS.has(input.verdict)) throw new Error('unknown verdict')
  const checks = Array.isArray(input.checks) ? input.checks : []
  return {
    verdict: input.verdict,
    thresholds: { review: int0to100(input.thresholds?.review), block: int0to100(input.thresholds?.block) },
    scoreBand: tensBand(int0to100(input.score)),
    signals: checks.map(toSignal).sort(compareSignals).slice(0, MAX_SIGNALS),
  }
}

export function cacheKey(facts: Facts): string {
  return JSON.stringify(facts)
}

const VERDICT_WORDS: Record<Facts['verdict'], string> = {
  allow: 'allow (the event goes through)',
  review: 'review (a person should look at the event)',
  block: 'block (the event is stopped)',
}

/** The whole user message, built from `Facts` and our own descriptions only. */
export function factsToPrompt(facts: Facts): string {
  const lines = [
    `Decision: ${VERDICT_WORDS[facts.verdict]}.`,
    `Risk score band: ${facts.scoreBand} out of 100; review starts at ${facts.thresholds.review}, block at ${facts.thresholds.block}.`,
  ]
  if (facts.signals.length === 0) {
    lines.push('Signals that fired: none.')
  } else {
    lines.push('Signals that fired, strongest first (code, weight, meaning, evidence):')
    for (const s of facts.signals) {
      const ev = s.evidence.map(([k, v]) => `${k}=${v}`).join(', ')
      lines.push(
        `- ${s.reason}, weight ${s.weight}: ${describeReason(s.reason)}.${ev ? ` Evidence: ${ev}.` : ''}`,
      )
    }
  }
  return lines.join('\n')
}

/** Instructions for the model. Written so the facts read as data, never as instructions. */
export const SYSTEM_PROMPT = [
  'You write a short note for a fraud analyst about why an automated rules engine reached its decision on one event.',
  'The decision is final and was made by the rules, not by you: state it plainly, never question, soften or argue against it, and never suggest a different outcome.',
  'Write 2 or 3 plain-English sentences, mentioning the strongest signals first, in everyday words rather than signal codes.',
  'Use only the facts provided. Do not invent details, do not quote an exact score, and do not add advice.',
  'Plain text only: no markdown, no lists, no headings, no quotation marks around the note.',
].join(' ')
