import { allFakers } from '@faker-js/faker'
import { describe, expect, it } from 'vitest'
import { looksGibberish, scoreMailbox } from '../../../src/intel/email/gibberish.js'
import { GIBBERISH_MODEL } from '../../../src/intel/email/gibberish-model.js'

// Human-like mailbox names come from faker's name and word data, a different source from the
// training lists (humannames, an-array-of-english-words), across many Latin-script locales.
const LOCALES = [
  'en',
  'en_GB',
  'en_IN',
  'en_NG',
  'de',
  'fr',
  'es',
  'it',
  'pt_BR',
  'nl',
  'pl',
  'sv',
  'tr',
  'id_ID',
  'cs_CZ',
  'hu',
  'ro',
  'fi',
  'da',
  'nb_NO',
  'af_ZA',
  'hr',
  'sk',
  'yo_NG',
  'zu_ZA',
  'vi',
] as const

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ascii = (s: string): string =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z]/g, '')

function humanSample(count: number): string[] {
  const rand = mulberry32(7)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const out: string[] = []
  while (out.length < count) {
    const f = allFakers[pick(LOCALES)]
    f.seed(Math.floor(rand() * 1e9))
    const first = ascii(f.person.firstName().split(' ')[0]!)
    const last = ascii(f.person.lastName().split(/[ -]/)[0]!)
    const en = allFakers.en
    const adj = ascii(en.word.adjective())
    const noun = ascii(en.word.noun())
    const animal = ascii(en.animal.type())
    if (!first || !last) continue
    const year = String(1960 + Math.floor(rand() * 50))
    const n = String(Math.floor(rand() * 99) + 1)
    const patterns = [
      `${first}.${last}`,
      `${first}${last}`,
      `${first[0]}.${last}`,
      `${first[0]}${last}`,
      `${first}_${last}${n}`,
      `${first}${year}`,
      `${first}.${last}${n}`,
      `${last}${first[0]}`,
      `the${adj}${animal}`,
      `${adj}${noun}`,
      `${adj}_${animal}${n}`,
      `${first}-${last}`,
    ]
    out.push(pick(patterns))
  }
  return out
}

function generatedSample(count: number): string[] {
  const rand = mulberry32(99)
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))
  const from = (alphabet: string, len: number): string =>
    Array.from({ length: len }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('')
  const mash = (): string => {
    const row = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'][int(0, 2)]!
    const start = int(0, row.length - 4)
    return from(row.slice(start, start + int(4, 6)), int(7, 12))
  }
  const makers = [
    () => from('abcdefghijklmnopqrstuvwxyz', int(7, 14)), // xkqzvbwp
    () => from('abcdefghijklmnopqrstuvwxyz0123456789', int(8, 14)), // a8f3k2j9
    () => from('0123456789abcdef', int(10, 16)), // hex ids
    mash, // hjdfgkjhdf
    () => from('bcdfghjklmnpqrstvwxz', int(6, 12)), // consonant soup
  ]
  return Array.from({ length: count }, (_, i) => makers[i % makers.length]!())
}

describe('gibberish model', () => {
  it('keeps typical human names and flags typical machine names', () => {
    for (const h of [
      'john.smith',
      'maria_garcia87',
      'thecoolcat',
      'j.doe',
      'jsmith',
      'anna-lena',
      'bob1',
      'xxdarkangelxx',
    ]) {
      expect(looksGibberish(h), h).toBe(false)
    }
    for (const g of ['xkqzvbwp', 'a8f3k2j9', 'hjdfgkjhdf', 'qwzxkvbn', '3f9a0c2be1']) {
      expect(looksGibberish(g), g).toBe(true)
    }
  })

  it('does not judge names with too little evidence', () => {
    expect(scoreMailbox('xq')).toMatchObject({ looksGibberish: false, basis: 'too_short' })
    expect(scoreMailbox('1234567890')).toMatchObject({ looksGibberish: false, basis: 'no_letters' })
    expect(scoreMailbox('иван')).toMatchObject({ looksGibberish: false, basis: 'no_letters' })
  })

  it('scores on a 0..1 scale with 0.5 at the threshold', () => {
    const human = scoreMailbox('john.smith')
    const machine = scoreMailbox('xkqzvbwpfj')
    expect(human.score).toBeLessThan(0.5)
    expect(machine.score).toBeGreaterThan(0.5)
    expect(human.score).toBeGreaterThanOrEqual(0)
    expect(machine.score).toBeLessThanOrEqual(1)
  })

  it('folds diacritics before scoring', () => {
    expect(scoreMailbox('józef.müller').score).toBe(scoreMailbox('jozef.muller').score)
  })

  it('measures false-positive and false-negative rates on unseen data', () => {
    const humans = humanSample(800)
    const machines = generatedSample(500)
    const fp = humans.filter((h) => looksGibberish(h))
    const fn = machines.filter((m) => !looksGibberish(m))
    const fpRate = fp.length / humans.length
    const fnRate = fn.length / machines.length
    console.log(
      `gibberish: FP ${(fpRate * 100).toFixed(2)}% (${fp.length}/${humans.length}), ` +
        `FN ${(fnRate * 100).toFixed(2)}% (${fn.length}/${machines.length}); ` +
        `trained held-out FP ${GIBBERISH_MODEL.heldOut.falsePositiveRate}, FN ${GIBBERISH_MODEL.heldOut.falseNegativeRate}`,
    )
    console.log(`false positives: ${fp.slice(0, 20).join(' ')}`)
    console.log(`false negatives: ${fn.slice(0, 20).join(' ')}`)
    expect(fpRate).toBeLessThan(0.05)
    expect(fnRate).toBeLessThan(0.15)
  })
})
