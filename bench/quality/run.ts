/**
 * Decision quality on labelled traffic: 14 simulated days of legitimate populations and attacks
 * scored through the real app, reported as false positives per population, catch rates per attack,
 * customer-level rates and the ROC AUC of the score, then how much of what is still wrong the
 * interface's own codes and rules decide (held.ts). See docs/quality.md.
 *
 *   npm run bench:quality [-- --seed N] [--events N] [--json file]
 */
import { writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { heldByInterface, heldMarkdown } from './held.js'
import { markdown, summarise } from './report.js'
import { simulate } from './simulate.js'

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    events: { type: 'string', default: '30000' },
    json: { type: 'string' },
  },
  strict: true,
})
const seed = Number(values.seed)
const events = Number(values.events)
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(events) || events < 100) {
  throw new Error('--seed must be an integer and --events an integer of at least 100')
}
const t0 = performance.now()
const scored = await simulate({
  seed,
  events,
  detail: values.json !== undefined,
  progress: (done, total) =>
    process.stderr.write(
      `scored ${done} / ${total} events (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`,
    ),
})
const summary = summarise(scored)
console.log(
  markdown(
    summary,
    `seed ${seed}, ${scored.length} events (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  ),
)
console.log(`\n${heldMarkdown(heldByInterface(scored))}`)
if (values.json) {
  writeFileSync(values.json, JSON.stringify(scored))
}
