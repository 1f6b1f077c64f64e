import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'
import { deref } from '../helpers/openapi.js'

const DOC = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'api-conventions.md'), 'utf8')
const section = (title: string) => {
  const start = DOC.indexOf(`## ${title}`)
  expect(start, title).toBeGreaterThanOrEqual(0)
  const end = DOC.indexOf('\n## ', start + 3)
  return DOC.slice(start, end < 0 ? undefined : end)
}

let h: Harness
beforeAll(async () => {
  h = await build()
})
afterAll(async () => {
  await h.close()
})

/** Whether a schema holds an object that passes unnamed properties through. */
function hasOpenObject(schema: unknown, seen = new Set<unknown>()): boolean {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return false
  seen.add(schema)
  const s = schema as Record<string, unknown>
  if (s['additionalProperties'] === true) return true
  return Object.values(s).some((v) => hasOpenObject(v, seen))
}

describe('docs/api-conventions.md says what the server does (items 11, 12)', () => {
  it('the rate-limit section describes GCRA and the Redis sharing, not a fixed window per process', () => {
    const limits = section('Rate limits and quota')
    expect(limits).toContain('GCRA')
    expect(limits).toContain('REDIS_URL')
    expect(limits).not.toMatch(/fixed one-minute window/)
  })

  it('every operation whose answer passes unnamed properties through is named in the Responses section', async () => {
    const doc = deref((await h.app.inject({ url: '/v1/openapi.json' })).json()) as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>
    }
    const responses = section('Responses')
    const open = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => hasOpenObject(op.responses?.['200']))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    expect(open.length).toBeGreaterThan(0)
    expect(open.filter((op) => !responses.includes(op))).toEqual([])
  })

  it('settles each naming inconsistency, with a compatible path for renamed fields', async () => {
    const names = section('Names of fields')
    for (const s of ['listEntries', 'list_entries', 'windowHours', 'snake_case', 'deprecated'])
      expect(names).toContain(s)
    const t = await h.tenant()
    const forget = await h.app.inject({
      method: 'POST',
      url: '/v1/forget',
      headers: t.headers,
      payload: { user_id: 'nobody' },
    })
    expect(forget.json().deleted).toMatchObject({ list_entries: 0, listEntries: 0 })
  })
})
