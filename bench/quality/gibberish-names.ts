/**
 * The gibberish model against names it was not trained on (see gibberish.ts): per faker locale written
 * in Latin letters, how many real people's mailbox names it flags, and how many generated ones it catches.
 */
import { allFakers } from '@faker-js/faker'
import { looksGibberish } from '../../src/intel/email/gibberish.js'
import { machineMailbox } from './attacks.js'
import { ascii, localPart } from './people.js'
import { Rng } from './rng.js'

export interface LocaleRow {
  locale: string
  names: number
  flagged: number
  examples: string[]
}

export interface GibberishMeasure {
  locales: LocaleRow[]
  names: number
  flagged: number
  machine: number
  machineFlagged: number
}

export function measureGibberish(perLocale: number, seed: number, machine = 20_000): GibberishMeasure {
  const rng = new Rng(seed)
  const locales: LocaleRow[] = []
  for (const [locale, faker] of Object.entries(allFakers)) {
    if (locale === 'base') continue // no names of its own
    faker.seed(seed)
    const row: LocaleRow = { locale, names: 0, flagged: 0, examples: [] }
    let tries = 0
    while (row.names < perLocale && tries < perLocale * 3) {
      tries++
      const first = ascii(faker.person.firstName().split(/[\s-]/)[0] ?? '')
      const last = ascii(faker.person.lastName().split(/[\s-]/).pop() ?? '')
      // Locales written in other scripts have no ASCII form here; they are left out, not guessed.
      if (first.length < 2 || last.length < 2) continue
      const local = localPart(rng, { first, last })
      row.names++
      if (looksGibberish(local)) {
        row.flagged++
        if (row.examples.length < 4) row.examples.push(local)
      }
    }
    if (row.names >= perLocale / 2) locales.push(row)
  }
  locales.sort((a, b) => b.flagged / b.names - a.flagged / a.names)
  let machineFlagged = 0
  for (let i = 0; i < machine; i++) if (looksGibberish(machineMailbox(rng))) machineFlagged++
  return {
    locales,
    names: locales.reduce((s, r) => s + r.names, 0),
    flagged: locales.reduce((s, r) => s + r.flagged, 0),
    machine,
    machineFlagged,
  }
}
