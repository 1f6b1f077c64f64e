import fc from 'fast-check'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { pgAvailable } from '../helpers/pg.js'
import { caseArb } from './cases.js'
import {
  checkCase,
  expectValidReached,
  FUZZ_PG_RUNS,
  FUZZ_SEED,
  type FuzzApp,
  openFuzzApp,
} from './harness.js'

/** The same properties on PostgreSQL, with fewer runs per operation (docs/reliability.md). */
const hasPg = await pgAvailable()

describe.skipIf(!hasPg)('fuzzing from the OpenAPI document on PostgreSQL', () => {
  let f: FuzzApp
  beforeAll(async () => {
    f = await openFuzzApp('postgres')
  }, 60_000)
  afterAll(async () => {
    await f?.close()
  })

  it('every operation: no 5xx, invalid → 400 naming the field and nothing written, valid → never 400', async () => {
    for (const op of f.operations) {
      const started = Date.now()
      await fc.assert(
        fc.asyncProperty(caseArb(op, f.auth(op)), (c) => checkCase(f, op, c)),
        { seed: FUZZ_SEED, numRuns: FUZZ_PG_RUNS },
      )
      expectValidReached(f, op)
      const t = f.tally[op.id]
      console.log(
        `fuzz (postgres) ${op.id}: ${FUZZ_PG_RUNS} cases in ${Date.now() - started} ms (requests ${Math.round(t?.injectMs ?? 0)} ms, row counts ${Math.round(t?.countMs ?? 0)} ms) ${JSON.stringify(t?.cases)}`,
      )
    }
  }, 1_800_000)
})
