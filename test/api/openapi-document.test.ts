import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LIST_NAME_PATTERN } from '../../src/schemas/lists.js'
import { REASONS } from '../../src/scoring/reasons.js'
import { LIST_ENTRY_TYPES } from '../../src/util/entities.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'
import { deref } from '../helpers/openapi.js'

/** What a client generator needs from the document (issue 30, item 13); the linters run in `npm run lint:openapi`. */
// biome-ignore lint/suspicious/noExplicitAny: the served JSON document, read by key in assertions
type Json = Record<string, any>

let h: Harness
let t: TestTenant
let raw: Json
let doc: Json
let operations: { name: string; method: string; op: Json }[]

beforeAll(async () => {
  h = await build()
  t = await h.tenant({ rateLimit: 3 })
  raw = (await h.app.inject({ url: '/v1/openapi.json' })).json()
  doc = deref(raw)
  operations = Object.entries(raw['paths'] as Json).flatMap(([path, ops]) =>
    Object.entries(ops as Json).map(([method, op]) => ({
      name: `${method.toUpperCase()} ${path}`,
      method,
      op,
    })),
  )
})
afterAll(async () => {
  await h.close()
})

const keyless = (op: Json) => Array.isArray(op['security']) && op['security'].length === 0

describe('the OpenAPI document is complete enough to generate a client from', () => {
  it('names every operation uniquely, describes and tags it with declared tags; has servers and a license', () => {
    const ids = operations.map(({ op }) => op['operationId'])
    expect(operations.filter(({ op }) => typeof op['operationId'] !== 'string').map((o) => o.name)).toEqual(
      [],
    )
    expect(new Set(ids).size).toBe(ids.length)
    expect(operations.filter(({ op }) => !op['description']).map((o) => o.name)).toEqual([])
    const declared = new Set((raw['tags'] as Json[]).map((tag) => tag['name']))
    const used = new Set(operations.flatMap(({ op }) => op['tags'] as string[]))
    expect([...used].filter((tag) => !declared.has(tag))).toEqual([])
    expect(raw['servers']?.length).toBeGreaterThan(0)
    expect(raw['info'].license).toMatchObject({ name: 'MIT' })
    expect(ids).toEqual(expect.arrayContaining(['score', 'batchScore', 'label', 'listEvents', 'getEvent']))
  })

  it('names the main schemas once in components and refers to them', () => {
    const schemas = raw['components'].schemas as Json
    for (const name of [
      'ScoreRequest',
      'ScoreResponse',
      'Check',
      'Event',
      'ListEntry',
      'Label',
      'ErrorBody',
      'ReasonCode',
    ])
      expect(Object.keys(schemas), name).toContain(name)
    const media = (op: Json, status: string) => op['responses'][status].content['application/json'].schema
    const score = raw['paths']['/v1/score'].post
    expect(score.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ScoreRequest',
    })
    expect(media(score, '200')).toEqual({ $ref: '#/components/schemas/ScoreResponse' })
    expect(raw['paths']['/v1/events/{id}'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/EventDetail',
    )
    expect(schemas['EventsPage'].properties.events.items).toEqual({ $ref: '#/components/schemas/Event' })
    expect(schemas['Event'].properties.labels.items).toEqual({ $ref: '#/components/schemas/Label' })
    expect(schemas['ListPage'].properties.entries.items).toEqual({ $ref: '#/components/schemas/ListEntry' })
    expect(schemas['ScoreResponse'].properties.checks.items).toEqual({ $ref: '#/components/schemas/Check' })
    // The error body is written once: every error answer refers to a shared response.
    expect(JSON.stringify(raw).match(/"request_id":\{/g) ?? []).toHaveLength(1)
    for (const { name, op } of operations)
      for (const [status, answer] of Object.entries(op['responses'] as Json))
        if (Number(status) >= 400)
          expect((answer as Json)['$ref'], `${name} ${status}`).toMatch(/^#\/components\/responses\//)
  })

  it('declares the statuses every operation can answer, with their headers', () => {
    for (const { name, method, op } of operations) {
      const statuses = Object.keys(op['responses'])
      expect(statuses, name).toEqual(expect.arrayContaining(['400', '429', '500', '503']))
      if (!keyless(op)) expect(statuses, name).toContain('401')
      if (!keyless(op) && method !== 'get') expect(statuses, name).toContain('403')
      if (op['requestBody']) expect(statuses, name).toEqual(expect.arrayContaining(['413', '415']))
      const ok = doc['paths'][name.split(' ')[1] as string][method].responses['200']
      expect(Object.keys(ok.headers), name).toEqual(
        expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      )
      const idempotent = (op['parameters'] ?? []).some((p: Json) => p['name'] === 'idempotency-key')
      expect('Idempotent-Replayed' in ok.headers, name).toBe(idempotent)
    }
    const responses = doc['components'].responses
    expect(Object.keys(responses.TooManyRequests.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'X-Request-Id']),
    )
    expect(Object.keys(responses.Unavailable.headers)).toContain('Retry-After')
  })

  it('gives every request body and every answer an example', () => {
    for (const { name, op } of operations) {
      const body = op['requestBody']?.content['application/json']
      if (body) expect(body.example, `${name} request`).toBeDefined()
      for (const [status, answer] of Object.entries(
        doc['paths'][name.split(' ')[1] as string][name.split(' ')[0]!.toLowerCase()].responses as Json,
      ))
        expect((answer as Json)['content']['application/json'].example, `${name} ${status}`).toBeDefined()
    }
    // The main types carry a real one, not one made up from their field types.
    expect(raw['components'].schemas.ScoreResponse.example.verdict).toBe('allow')
  })

  it('keeps closed enums closed: verdicts, entity types, labels and reason codes; list names by their pattern', () => {
    const s = doc['components'].schemas
    expect(s.Event.properties.verdict.enum).toEqual(['allow', 'review', 'block'])
    // allow, block or a named list of the tenant's (docs/rules.md): open, but bounded by a pattern.
    expect(s.ListEntryInput.properties.list.pattern).toBe(LIST_NAME_PATTERN)
    expect(s.ListEntry.properties.type.enum).toEqual([...LIST_ENTRY_TYPES])
    expect(s.Label.properties.label.enum).toEqual(['fraud', 'chargeback', 'legit'])
    expect(s.ReasonCode.enum).toEqual(REASONS.map((r) => r.code))
    expect(s.ScoreResponse.properties.reasons.items.anyOf[0].enum).toEqual(REASONS.map((r) => r.code))
  })

  it('uses only standard formats', () => {
    const standard = new Set([
      'int32',
      'int64',
      'float',
      'double',
      'byte',
      'binary',
      'date',
      'date-time',
      'password',
      'email',
      'uuid',
      'uri',
      'ipv4',
      'ipv6',
      'hostname',
    ])
    const formats = [...JSON.stringify(raw).matchAll(/"format":"([^"]+)"/g)].map((m) => m[1])
    expect(formats.length).toBeGreaterThan(0)
    expect(formats.filter((f) => !standard.has(f as string))).toEqual([])
  })
})

describe('the headers the document declares are the ones the server sends', () => {
  it('on an answer, an idempotent replay and a 429', async () => {
    const declared = (path: string, method: string, status: string) =>
      Object.keys(doc['paths'][path][method].responses[status].headers).map((k) => k.toLowerCase())
    const send = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: { ...t.headers, 'idempotency-key': 'k-1' },
        payload: { event: 'signup', ip: '73.162.10.20' },
      })
    await send()
    const replay = await send()
    expect(replay.statusCode).toBe(200)
    for (const name of declared('/v1/score', 'post', '200')) expect(replay.headers, name).toHaveProperty(name)
    let limited = await h.app.inject({ url: '/v1/events', headers: t.headers })
    for (let i = 0; i < 10 && limited.statusCode !== 429; i++)
      limited = await h.app.inject({ url: '/v1/events', headers: t.headers })
    expect(limited.statusCode).toBe(429)
    for (const name of Object.keys(doc['components'].responses.TooManyRequests.headers))
      expect(limited.headers, name).toHaveProperty(name.toLowerCase())
  })
})
