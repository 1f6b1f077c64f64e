import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/errors.js'
import { build, type Harness } from '../helpers/build.js'
import { deref } from '../helpers/openapi.js'

interface Schema {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  enum?: string[]
}
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>
}

let h: Harness
let operations: { name: string; op: Operation }[]

beforeAll(async () => {
  h = await build()
  const doc = deref((await h.app.inject({ url: '/v1/openapi.json' })).json()) as {
    paths: Record<string, Record<string, Operation>>
  }
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
  )
})
afterAll(async () => {
  await h.close()
})

const jsonSchema = (op: Operation, status: string) =>
  op.responses?.[status]?.content?.['application/json']?.schema

describe('the OpenAPI document describes every answer', () => {
  it('lists every /v1 route except the document itself and the browser beacon', () => {
    // The beacon is for the browser library only and stays outside the document (test/api/beacon.test.ts).
    const routes = h.app.routeTable.filter(
      (r) => r.url.startsWith('/v1/') && r.url !== '/v1/openapi.json' && !r.url.startsWith('/v1/beacon'),
    )
    expect(operations).toHaveLength(routes.length)
  })

  it('declares a 2xx response schema with properties for every operation', () => {
    const missing = operations
      .filter(({ op }) => {
        const ok = Object.keys(op.responses ?? {}).filter((s) => /^2\d\d$/.test(s))
        return !ok.some((s) => Object.keys(jsonSchema(op, s)?.properties ?? {}).length > 0)
      })
      .map((o) => o.name)
    expect(missing).toEqual([])
  })

  it('describes every declared error status with the one error body', () => {
    let declared = 0
    for (const { name, op } of operations) {
      for (const status of Object.keys(op.responses ?? {}).filter((s) => /^[45]\d\d$/.test(s))) {
        declared++
        const schema = jsonSchema(op, status)
        expect(Object.keys(schema?.properties ?? {}), `${name} ${status}`).toEqual([
          'error',
          'code',
          'request_id',
        ])
        expect(schema?.required, `${name} ${status}`).toEqual(['error', 'code', 'request_id'])
        expect(schema?.properties?.['code']?.enum, `${name} ${status}`).toEqual(ERROR_CODES)
      }
    }
    expect(declared).toBeGreaterThan(operations.length)
  })
})
