import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { caseArb } from './cases.js'
import { checkCase, expectValidReached, FUZZ_RUNS, FUZZ_SEED, type FuzzApp, openFuzzApp } from './harness.js'
import { REGRESSIONS } from './regressions.js'

/**
 * Fuzzing every operation of /v1/openapi.json (and the beacon) with requests generated from its own
 * schemas: docs/reliability.md. A failure prints the seed and path; rerun with FUZZ_SEED, then add the
 * counterexample to regressions.ts.
 */
let f: FuzzApp

beforeAll(async () => {
  f = await openFuzzApp()
}, 60_000)

afterAll(async () => {
  await f?.close()
})

describe('fuzzing from the OpenAPI document', () => {
  it('covers every operation of the document', () => {
    expect(f.operations.length).toBeGreaterThanOrEqual(26)
  })

  it('replays the regression cases', async () => {
    for (const r of REGRESSIONS) {
      const op = f.operations.find((o) => o.id === r.op)
      expect(op, r.op).toBeDefined()
      if (!op) continue
      await checkCase(f, op, {
        ...r.case,
        req: { ...r.case.req, headers: { ...f.auth(op), ...r.case.req.headers } },
      })
    }
  })

  const ids = [
    'GET /v1/health',
    'GET /v1/ip',
    'GET /v1/config',
    'PUT /v1/config',
    'GET /v1/config/versions',
    'POST /v1/config/simulate',
    'GET /v1/lists',
    'POST /v1/lists',
    'DELETE /v1/lists/{id}',
    'POST /v1/batch/lists',
    'POST /v1/check/email',
    'POST /v1/check/ip',
    'POST /v1/check/phone',
    'POST /v1/batch/check/email',
    'POST /v1/batch/check/ip',
    'POST /v1/batch/check/phone',
    'POST /v1/check',
    'GET /v1/lookups',
    'POST /v1/score',
    'POST /v1/batch/score',
    'GET /v1/events',
    'GET /v1/events/{id}',
    'GET /v1/usage',
    'GET /v1/stats',
    'GET /v1/rules/performance',
    'POST /v1/replay',
    'POST /v1/label',
    'GET /v1/labels',
    'DELETE /v1/labels/{id}',
    'POST /v1/subject',
    'POST /v1/forget',
    'GET /v1/suppressions',
    'GET /v1/device/{deviceId}/observations',
    'POST /v1/beacon',
    'POST /v1/webhooks',
    'GET /v1/webhooks',
    'GET /v1/webhooks/{webhookId}',
    'PATCH /v1/webhooks/{webhookId}',
    'DELETE /v1/webhooks/{webhookId}',
    'POST /v1/webhooks/{webhookId}/rotate-secret',
    'GET /v1/webhooks/{webhookId}/deliveries',
    'POST /v1/webhooks/{webhookId}/deliveries/{messageId}/redeliver',
  ]

  it("the list below is the document's", () => {
    expect(f.operations.map((o) => o.id).sort()).toEqual([...ids].sort())
  })

  it.each(ids)(
    '%s: no 5xx, invalid → 400 naming the field and nothing written, valid → never 400 and often 2xx',
    async (id) => {
      const op = f.operations.find((o) => o.id === id)
      if (!op) throw new Error(`${id} is not in the document`)
      const started = Date.now()
      await fc.assert(
        fc.asyncProperty(caseArb(op, f.auth(op)), (c) => checkCase(f, op, c)),
        { seed: FUZZ_SEED, numRuns: FUZZ_RUNS },
      )
      expectValidReached(f, op)
      // Figures for docs/reliability.md.
      const t = f.tally[id]
      console.log(
        `fuzz ${id}: ${FUZZ_RUNS} cases in ${Date.now() - started} ms (seed ${FUZZ_SEED}; requests ${Math.round(t?.injectMs ?? 0)} ms, row counts ${Math.round(t?.countMs ?? 0)} ms) ${JSON.stringify(t?.cases)}`,
      )
    },
    1_800_000,
  )
})
