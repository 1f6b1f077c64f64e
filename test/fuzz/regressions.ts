import type { FuzzCase } from './harness.js'

const JSON_TYPE = { 'content-type': 'application/json' }

/**
 * Counterexamples the fuzzer found (seed 20261123 unless noted), kept as cases that always run; the
 * auth headers are added at run time. Each failed before the fix named in `note`. To add one: copy
 * the `Counterexample` fast-check prints (dropping the key headers) and say what it found.
 */
export const REGRESSIONS: { op: string; note: string; case: FuzzCase }[] = [
  {
    op: 'POST /v1/check/email',
    note: 'duplicate key answered 200 (JSON.parse kept the last copy); fixed in src/plugins/json-body.ts',
    case: {
      req: {
        method: 'POST',
        url: '/v1/check/email',
        headers: JSON_TYPE,
        payload: '{"email":"$6&~5z|I","email":"$6&~5z|I"}',
      },
      expect: { kind: 'invalid', field: 'body.email', how: 'duplicate key' },
    },
  },
  {
    op: 'POST /v1/subject',
    note: '__proto__ key answered "Body is not valid JSON", naming no field; fixed in src/plugins/json-body.ts',
    case: {
      req: {
        method: 'POST',
        url: '/v1/subject',
        headers: JSON_TYPE,
        payload: '{"__proto__":{"x":1},"email":"z_0@mailinator.com","phone":"+442071838750"}',
      },
      expect: { kind: 'invalid', field: 'body.__proto__ is not an allowed field', how: '__proto__ key' },
    },
  },
  {
    op: 'POST /v1/forget',
    note: 'constructor.prototype key answered "Body is not valid JSON"; fixed in src/plugins/json-body.ts',
    case: {
      req: {
        method: 'POST',
        url: '/v1/forget',
        headers: JSON_TYPE,
        payload: '{"constructor":{"prototype":{"x":1}},"email":"o,Nhuf"}',
      },
      expect: {
        kind: 'invalid',
        field: 'body.constructor.prototype is not an allowed field',
        how: 'constructor.prototype key',
      },
    },
  },
  {
    op: 'POST /v1/batch/lists',
    note: 'same, inside a batch body',
    case: {
      req: {
        method: 'POST',
        url: '/v1/batch/lists',
        headers: JSON_TYPE,
        payload:
          '{"constructor":{"prototype":{"x":1}},"rows":[{"list":"allow","type":"ip","value":"\\u0000"}]}',
      },
      expect: { kind: 'invalid', field: 'body.constructor.prototype', how: 'constructor.prototype key' },
    },
  },
  {
    op: 'POST /v1/lists',
    note: 'NUL in a stored string answered 500 on PostgreSQL (text cannot hold U+0000); now 400 on both engines',
    case: {
      req: {
        method: 'POST',
        url: '/v1/lists',
        headers: JSON_TYPE,
        payload: '{"list":"allow","type":"user","value":"  \\u0000  \\u0000"}',
      },
      expect: { kind: 'invalid', field: 'body.value', how: 'NUL' },
    },
  },
]
