/**
 * Prints the gibberish model's false positives on held-out real names per locale, and its catch rate on
 * generated names (gibberish-names.ts). See docs/quality.md.
 *
 *   npm run bench:gibberish [-- --per-locale N] [--seed N]
 */
import { parseArgs } from 'node:util'
import { measureGibberish } from './gibberish-names.js'

const { values } = parseArgs({
  options: { 'per-locale': { type: 'string', default: '2000' }, seed: { type: 'string', default: '1' } },
  strict: true,
})
const perLocale = Number(values['per-locale'])
const seed = Number(values.seed)
if (!Number.isSafeInteger(perLocale) || perLocale < 100 || !Number.isSafeInteger(seed)) {
  throw new Error('--per-locale must be an integer of at least 100 and --seed an integer')
}
const m = measureGibberish(perLocale, seed)
const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(2)} %`
console.log(`# gibberish_email on held-out names (seed ${seed}, ${perLocale} names per locale)\n`)
console.log('| | mailbox names | flagged |\n|---|---|---|')
console.log(`| real names, ${m.locales.length} faker locales | ${m.names} | ${pct(m.flagged, m.names)} |`)
console.log(`| machine-generated (attacks.ts) | ${m.machine} | ${pct(m.machineFlagged, m.machine)} |\n`)
console.log('| locale | names | flagged | examples |\n|---|---|---|---|')
for (const r of m.locales)
  console.log(`| ${r.locale} | ${r.names} | ${pct(r.flagged, r.names)} | ${r.examples.join(', ')} |`)
