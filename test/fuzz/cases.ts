import fc from 'fast-check'
import type { FuzzCase, FuzzRequest } from './harness.js'
import { FIT, type Operation, QUERY_RANGE_REFUSALS, SAMPLES } from './operations.js'
import { breakages, type JsonSchema, toJson, unit, validArb } from './schema-arbitrary.js'

/** The parts of one request: body (undefined when the route takes none), query and path values. */
interface Parts {
  body: unknown
  query: Record<string, string>
  params: Record<string, string>
}

/** No lone surrogate (encodeURIComponent throws on one). */
const wellFormed = (s: string) =>
  !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)

function partsArb(op: Operation): fc.Arbitrary<Parts> {
  const query: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, q] of Object.entries(op.query)) query[name] = validArb(q.schema, SAMPLES, name)
  const params: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, p] of Object.entries(op.params)) params[name] = validArb(p, SAMPLES, name)
  const fitBody = FIT[op.id]
  const body = op.body ? validArb(op.body, SAMPLES) : fc.constant(undefined)
  return fc.record({
    body: fitBody
      ? fc.tuple(body, fc.boolean()).chain(([b, fits]) => (fits ? fitBody(b) : fc.constant(b)))
      : body,
    query: fc
      .record(query, { requiredKeys: Object.keys(op.query).filter((k) => op.query[k]?.required) })
      .filter((q) => Object.values(q).every((v) => wellFormed(String(v)))) as fc.Arbitrary<
      Record<string, string>
    >,
    params: fc
      .record(params)
      // `.` and `..` are dot segments: a URL with them is a different path, not this parameter.
      .filter((p) =>
        Object.values(p).every((v) => wellFormed(String(v)) && v !== '.' && v !== '..'),
      ) as fc.Arbitrary<Record<string, string>>,
  })
}

function request(op: Operation, auth: Record<string, string>, parts: Parts, payload?: string): FuzzRequest {
  let path = op.path
  for (const [k, v] of Object.entries(parts.params)) path = path.replace(`{${k}}`, encodeURIComponent(v))
  const qs = Object.entries(parts.query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&')
  const body = payload ?? (parts.body === undefined ? undefined : toJson(parts.body))
  return {
    method: op.method,
    url: qs ? `${path}?${qs}` : path,
    headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: body } : {}),
  }
}

/** Breaks one query parameter or path value (they are strings: bad patterns, lengths, enums, ranges). */
function brokenUrl(
  op: Operation,
  parts: Parts,
): { parts: Parts; field: string | RegExp; how: string; statuses?: number[] }[] {
  const out: { parts: Parts; field: string | RegExp; how: string; statuses?: number[] }[] = []
  for (const [name, q] of Object.entries(op.query)) {
    for (const b of breakages(q.schema, parts.query[name], `query.${name}`)) {
      if (typeof b.value !== 'string') continue
      out.push({
        parts: { ...parts, query: { ...parts.query, [name]: b.value } },
        field: b.field,
        how: b.how,
      })
    }
    if (['limit', 'hours', 'window_hours'].includes(name))
      for (const v of QUERY_RANGE_REFUSALS)
        out.push({
          parts: { ...parts, query: { ...parts.query, [name]: v } },
          field: `query.${name}`,
          how: 'range',
        })
  }
  if (op.strictQuery)
    for (const k of ['unknown', 'LIMIT', 'x\u0000', '😀'])
      out.push({
        parts: { ...parts, query: { ...parts.query, [k]: '1' } },
        field: `query.${k}`,
        how: 'unknown query',
      })
  for (const [name, p] of Object.entries(op.params)) {
    for (const b of breakages(p, parts.params[name], `params.${name}`)) {
      if (typeof b.value !== 'string') continue
      const long = b.value.length > 1024
      out.push({
        parts: { ...parts, params: { ...parts.params, [name]: b.value } },
        // Past the router's 1024 characters the router refuses it before the schema sees it.
        field: long ? /path parameter is longer than 1024/ : b.field,
        how: b.how,
        // An empty segment is a different URL: no route (404) is as good a refusal.
        ...(b.value === '' ? { statuses: [400, 404] } : {}),
      })
    }
  }
  return out
}

const nested = (depth: number, open: string, close: string, inner = '1') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`

/** Bodies that are not a JSON object of the schema at all. */
function rawBodies(
  valid: unknown,
  jsonAlso: string[] = [],
): { payload: string; type?: string; field: string | RegExp; how: string; statuses?: number[] }[] {
  const text = toJson(valid)
  const obj =
    valid && typeof valid === 'object' && !Array.isArray(valid) ? (valid as Record<string, unknown>) : {}
  const keys = Object.keys(obj)
  const firstKey = keys[0] ?? 'x'
  const body = /body/i
  const out: { payload: string; type?: string; field: string | RegExp; how: string; statuses?: number[] }[] =
    [
      { payload: '', field: body, how: 'empty body' },
      { payload: 'not json', field: body, how: 'non-JSON' },
      { payload: text.slice(0, Math.max(1, text.length - 1)), field: body, how: 'truncated JSON' },
      { payload: `${text}x`, field: body, how: 'trailing garbage' },
      { payload: "{'a':1}", field: body, how: 'single quotes' },
      { payload: 'NaN', field: body, how: 'NaN' },
      { payload: '\u0000', field: body, how: 'NUL body' },
      { payload: 'null', field: 'body', how: 'null body' },
      { payload: '[]', field: 'body', how: 'array body' },
      { payload: '"text"', field: 'body', how: 'string body' },
      { payload: `1${'0'.repeat(500)}`, field: 'body', how: 'very long number body' },
      { payload: nested(20_000, '[', ']'), field: /body(\[0\])* is nested/, how: 'deep array body' },
      { payload: nested(20_000, '{"a":', '}'), field: /body(\.a)* is nested/, how: 'deep object body' },
      {
        payload: `{${text.slice(1, -1)}${keys.length ? ',' : ''}"__deep":${nested(20_000, '{"constructor":', '}')}}`,
        field: /body\.__deep(\.constructor)* is nested|body\.__deep\.constructor\.prototype/,
        how: 'deep nesting under constructor keys',
      },
      {
        payload: `{"__proto__":{"x":1}${keys.length ? ',' : ''}${text.slice(1)}`,
        field: 'body.__proto__ is not an allowed field',
        how: '__proto__ key',
      },
      {
        payload: `{"constructor":{"prototype":{"x":1}}${keys.length ? ',' : ''}${text.slice(1)}`,
        field: 'body.constructor.prototype is not an allowed field',
        how: 'constructor.prototype key',
      },
      // The same key twice: the first copy would be silently dropped by JSON.parse.
      {
        payload: `{${JSON.stringify(firstKey)}:${toJson(obj[firstKey] ?? 1)}${keys.length ? ',' : ''}${text.slice(1)}`,
        field: `body.${firstKey}`,
        how: 'duplicate key',
      },
    ]
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonx',
    'text/json',
  ].filter((t) => !jsonAlso.includes(t)))
    out.push({
      payload: text,
      type,
      field: /media type|content-type/i,
      how: `content-type ${type}`,
      statuses: [415],
    })
  out.push({
    payload: text,
    type: '',
    field: /media type|content-type/i,
    how: 'no content-type',
    statuses: [400, 415],
  })
  return out
}

/** Requests of every kind for one operation: valid ones, and each kind of invalid one. */
export function caseArb(op: Operation, auth: Record<string, string>): fc.Arbitrary<FuzzCase> {
  const parts = partsArb(op)
  const valid = parts.map((p): FuzzCase => ({ req: request(op, auth, p), expect: { kind: 'valid' } }))
  const kinds: { weight: number; arbitrary: fc.Arbitrary<FuzzCase> }[] = [{ weight: 4, arbitrary: valid }]
  if (op.body) {
    const schema = op.body as JsonSchema
    kinds.push({
      weight: 4,
      arbitrary: parts.chain((p) =>
        fc.constantFrom(...breakages(schema, p.body, 'body')).map(
          (b): FuzzCase => ({
            req: request(op, auth, { ...p, body: b.value }),
            expect: { kind: 'invalid', field: b.field, how: b.how },
          }),
        ),
      ),
    })
    kinds.push({
      weight: 2,
      arbitrary: parts.chain((p) =>
        fc.constantFrom(...rawBodies(p.body, op.jsonAlso)).map((r): FuzzCase => {
          const req = request(op, auth, p, r.payload)
          if (r.type !== undefined) {
            if (r.type === '') delete req.headers['content-type']
            else req.headers['content-type'] = r.type
          }
          return {
            req,
            expect: {
              kind: 'invalid',
              field: r.field,
              how: r.how,
              ...(r.statuses ? { statuses: r.statuses } : {}),
            },
          }
        }),
      ),
    })
  }
  const urlBreaks = (p: Parts) => brokenUrl(op, p)
  const hasUrlParts = op.strictQuery || Object.keys(op.query).length > 0 || Object.keys(op.params).length > 0
  if (hasUrlParts)
    kinds.push({
      weight: 2,
      arbitrary: parts
        .filter((p) => urlBreaks(p).length > 0)
        .chain((p) =>
          fc.constantFrom(...urlBreaks(p)).map(
            (b): FuzzCase => ({
              req: request(op, auth, b.parts),
              expect: {
                kind: 'invalid',
                field: b.field,
                how: b.how,
                ...(b.statuses ? { statuses: b.statuses } : {}),
              },
            }),
          ),
        ),
    })
  // A query parameter sent twice arrives as an array: refused as the wrong type, naming it.
  const names = Object.keys(op.query)
  if (names.length > 0)
    kinds.push({
      weight: 1,
      arbitrary: fc.tuple(parts, fc.constantFrom(...names)).map(([p, name]): FuzzCase => {
        const req = request(op, auth, p)
        const sep = req.url.includes('?') ? '&' : '?'
        return {
          req: { ...req, url: `${req.url}${sep}${name}=1&${name}=2` },
          expect: { kind: 'invalid', field: `query.${name}`, how: 'query parameter sent twice' },
        }
      }),
    })
  // Bytes no client should send in a URL: a lone surrogate's UTF-8 form, stray percent signs.
  kinds.push({
    weight: 1,
    arbitrary: fc
      .tuple(
        parts,
        fc.constantFrom('%ED%A0%80', '%', '%zz', '%00', '%C0%AF', '%F0%9F%98%80'),
        fc.array(unit, { maxLength: 3 }),
      )
      .map(([p, bad]): FuzzCase => {
        const req = request(op, auth, p)
        const sep = req.url.includes('?') ? '&' : '?'
        return {
          req: { ...req, url: `${req.url}${sep}x=${bad}` },
          expect: { kind: 'any', how: 'odd URL bytes' },
        }
      }),
  })
  return fc.oneof(...kinds)
}
