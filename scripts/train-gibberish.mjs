// Trains the mailbox-name gibberish model and writes src/intel/email/gibberish-model.ts.
//
//   node scripts/train-gibberish.mjs
//
// Data (devDependencies, all MIT): `humannames` (~197k first and last names from many countries) and
// `an-array-of-english-words` (~275k English words). Ten per cent of each list is held out to calibrate
// the threshold, so the threshold is chosen on names the counts never saw. The model is a character
// trigram table over a-z plus a word boundary, trained on synthetic mailbox names (first.last, flast,
// word+word, …) so that joins between words and single-letter initials look normal.
// Deterministic: the same packages give the same model byte for byte.

import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(root, 'src', 'intel', 'email', 'gibberish-model.ts')

const K = 27 // 0 = boundary, 1..26 = a..z
const SCALE = 16 // table bytes hold round(-ln p * SCALE)
const ALPHA = 2 // weight of the bigram estimate inside the trigram estimate
const BETA = 1 // weight of the unigram estimate inside the bigram estimate
const TARGET_FP = 0.0005 // a wrongly flagged real person costs more than a missed random name

// --- deterministic randomness --------------------------------------------------------------------
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rand = mulberry32(20260115)
const pick = (arr) => arr[Math.floor(rand() * arr.length)]
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))

// --- data ---------------------------------------------------------------------------------------
const FOLD = { ø: 'o', æ: 'ae', œ: 'oe', ß: 'ss', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' }
function asciiWord(s) {
  return s
    .toLowerCase()
    .replace(/[øæœßłđðþı]/g, (c) => FOLD[c])
    .normalize('NFKD')
    .replace(/[^a-z]/g, '')
}
function words(list) {
  const out = new Set()
  for (const item of list) {
    for (const part of String(item).split(/[\s'’.-]+/)) {
      const w = asciiWord(part)
      if (w.length >= 2) out.add(w)
    }
  }
  return [...out].sort()
}
function split(list) {
  const train = []
  const held = []
  for (const w of list) (rand() < 0.1 ? held : train).push(w)
  return { train, held }
}

const names = split(words(Object.keys(require('humannames/index.json'))))
const english = split(words(require('an-array-of-english-words/index.json').filter((w) => w.length <= 10)))

// --- synthetic mailbox names ----------------------------------------------------------------------
const digits = () => String(rand() < 0.5 ? int(1, 99) : int(1950, 2012))
function mailbox(nameList, wordList) {
  const n1 = pick(nameList)
  const n2 = pick(nameList)
  const w1 = pick(wordList)
  const w2 = pick(wordList)
  switch (int(0, 13)) {
    case 0:
      return `${n1}.${n2}`
    case 1:
      return `${n1}${n2}`
    case 2:
      return `${n1[0]}${n2}`
    case 3:
      return `${n1[0]}.${n2}`
    case 4:
      return `${n1}${n2[0]}`
    case 5:
      return `${n1}_${n2}${digits()}`
    case 6:
      return `${n1}${digits()}`
    case 7:
      return `${w1}${w2}`
    case 8:
      return `the${w1}${w2}`
    case 9:
      return `${w1}${n1}`
    case 10:
      return `${n1}`
    case 11:
      return `${w1}_${w2}`
    case 12:
      return `${n1[0]}${n2[0]}${n2}`
    default:
      return `${w1}${digits()}`
  }
}

// Letter runs exactly as the scorer sees them: split on separators and digits.
const runs = (s) => s.split(/[^a-z]+/).filter(Boolean)

// --- counting -----------------------------------------------------------------------------------
const tri = new Float64Array(K * K * K)
const code = (ch) => ch.charCodeAt(0) - 96
function count(run, weight = 1) {
  let a = 0
  let b = 0
  for (const ch of run) {
    const c = code(ch)
    tri[(a * K + b) * K + c] += weight
    a = b
    b = c
  }
  tri[(a * K + b) * K] += weight
}
for (const w of names.train) count(w)
for (const w of english.train) count(w, 0.5)
const SYNTHETIC = 600_000
for (let i = 0; i < SYNTHETIC; i++) for (const r of runs(mailbox(names.train, english.train))) count(r)

// --- smoothed conditional log-probabilities ---------------------------------------------------------
const bi = new Float64Array(K * K)
const uni = new Float64Array(K)
for (let a = 0; a < K; a++)
  for (let b = 0; b < K; b++)
    for (let c = 0; c < K; c++) {
      const v = tri[(a * K + b) * K + c]
      bi[b * K + c] += v
      uni[c] += v
    }
const uniTotal = uni.reduce((s, v) => s + v, 0)
const table = new Uint8Array(K * K * K)
for (let a = 0; a < K; a++)
  for (let b = 0; b < K; b++) {
    let ctx = 0
    for (let c = 0; c < K; c++) ctx += tri[(a * K + b) * K + c]
    let biCtx = 0
    for (let c = 0; c < K; c++) biCtx += bi[b * K + c]
    for (let c = 0; c < K; c++) {
      const pUni = (uni[c] + 1) / (uniTotal + K)
      const pBi = (bi[b * K + c] + BETA * K * pUni) / (biCtx + BETA * K)
      const p = (tri[(a * K + b) * K + c] + ALPHA * K * pBi) / (ctx + ALPHA * K)
      table[(a * K + b) * K + c] = Math.min(255, Math.round(-Math.log(p) * SCALE))
    }
  }

// --- calibration on held-out names and generated strings ---------------------------------------------
function meanLogProb(local) {
  let sum = 0
  let n = 0
  for (const r of runs(local)) {
    let a = 0
    let b = 0
    for (const ch of r) {
      const c = code(ch)
      sum -= table[(a * K + b) * K + c] / SCALE
      n++
      a = b
      b = c
    }
    sum -= table[(a * K + b) * K] / SCALE
    n++
  }
  return n ? sum / n : 0
}
const letters = 'abcdefghijklmnopqrstuvwxyz'
const ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm']
function generated() {
  const len = int(6, 14)
  const kind = int(0, 2)
  let s = ''
  if (kind === 2) {
    const row = pick(ROWS)
    const start = int(0, row.length - 4)
    const keys = row.slice(start, start + int(4, 6))
    for (let i = 0; i < len; i++) s += pick(keys)
  } else {
    for (let i = 0; i < len; i++) s += letters[Math.floor(rand() * 26)]
  }
  return s
}
const heldHuman = []
for (let i = 0; i < 20_000; i++) heldHuman.push(mailbox(names.held, english.held))
const judged = (s) => runs(s).join('').length >= 4
const transitions = (s) => runs(s).reduce((n, r) => n + r.length + 1, 0)
const humans = heldHuman.filter(judged).map((s) => ({ mean: meanLogProb(s), n: transitions(s) }))
const randoms = Array.from({ length: 20_000 }, generated).map((s) => ({
  mean: meanLogProb(s),
  n: transitions(s),
}))

// Decision: gibberish when mean < threshold - slack / n. The slack term asks short names for stronger
// evidence, since a few letters say little. For each slack, the threshold is the held-out human
// quantile that gives TARGET_FP; the slack with the fewest missed generated strings wins.
let best = null
for (let slack = 0; slack <= 12; slack += 0.5) {
  const adjusted = humans.map((h) => h.mean + slack / h.n).sort((x, y) => x - y)
  const threshold = adjusted[Math.floor(adjusted.length * TARGET_FP)]
  const fn = randoms.filter((r) => r.mean + slack / r.n >= threshold).length / randoms.length
  if (!best || fn < best.fn) best = { slack, threshold, fn }
}
const slack = best.slack
const threshold = Math.round(best.threshold * 1000) / 1000
const isGib = (x) => x.mean + slack / x.n < threshold
const fp = humans.filter(isGib).length / humans.length
const fn = randoms.filter((r) => !isGib(r)).length / randoms.length
const medianHuman = humans.map((h) => h.mean + slack / h.n).sort((x, y) => x - y)[
  Math.floor(humans.length / 2)
]
// Spread used to turn the distance from the threshold into a 0..1 score.
const spread = Math.round((medianHuman - threshold) * 1000) / 1000

// --- output -------------------------------------------------------------------------------------
const b64 = Buffer.from(table).toString('base64')
const chunks = b64.match(/.{1,100}/g) ?? []
const body = `// Generated by scripts/train-gibberish.mjs; do not edit by hand. Retrain with: node scripts/train-gibberish.mjs
// Character trigram model of human mailbox names (symbols: boundary, a..z). See docs/intel-email.md.

export const GIBBERISH_MODEL = {
  /** Size of the symbol alphabet: 0 is the word boundary, 1..26 are a..z. */
  symbols: ${K},
  /** Each table byte is round(-ln p * scale) for p = P(next | two previous symbols). */
  scale: ${SCALE},
  /** A name looks machine-generated when its mean ln P per transition + slack / transitions < threshold. */
  threshold: ${threshold},
  slack: ${slack},
  /** Typical distance of a human name above the threshold, used to scale the 0..1 score. */
  spread: ${spread},
  /** Rates on data the counts never saw, measured when the model was trained. */
  heldOut: { falsePositiveRate: ${Number(fp.toFixed(4))}, falseNegativeRate: ${Number(fn.toFixed(4))}, humans: ${humans.length}, generated: ${randoms.length} },
  training: {
    sources: ['humannames@${require('humannames/package.json').version} (MIT)', 'an-array-of-english-words@${require('an-array-of-english-words/package.json').version} (MIT)'],
    names: ${names.train.length},
    words: ${english.train.length},
    syntheticMailboxes: ${SYNTHETIC},
  },
  table: [
${chunks.map((c) => `    '${c}',`).join('\n')}
  ].join(''),
} as const
`
writeFileSync(OUT, body)
console.log(
  `wrote ${OUT}: threshold ${threshold}, slack ${slack}, spread ${spread}, held-out FP ${(fp * 100).toFixed(2)}%, FN ${(fn * 100).toFixed(2)}%`,
)
