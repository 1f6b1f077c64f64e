import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkJsonShape, MAX_JSON_DEPTH } from '../../src/plugins/json-body.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

/** Findings of the OpenAPI fuzzer (test/fuzz) in the JSON body parser, each with its own case. */
let h: Harness
let t: TestTenant

beforeAll(async () => {
  h = await build()
  t = await h.tenant({ rateLimit: 1000 })
})

afterAll(async () => {
  await h.close()
})

const post = (url: string, payload: string) =>
  h.app.inject({
    method: 'POST',
    url,
    headers: { ...t.headers, 'content-type': 'application/json' },
    payload,
  })

const events = async () =>
  Number((await h.store.db.all<{ n: number }>('SELECT count(*) AS n FROM events'))[0]?.n ?? 0)

async function refused(url: string, payload: string, error: string) {
  const before = await events()
  const res = await post(url, payload)
  expect(res.statusCode, res.body).toBe(400)
  expect(res.json()).toMatchObject({ code: 'bad_request', error })
  expect(await events()).toBe(before)
}

describe('JSON bodies', () => {
  it('a key sent twice is refused naming it (JSON.parse used to keep the last copy silently)', async () => {
    await refused(
      '/v1/check/email',
      '{"email":"a@example.com","email":"b@example.com"}',
      'body.email is sent more than once',
    )
    await refused('/v1/score', '{"event":"signup","event":"login"}', 'body.event is sent more than once')
    // Escapes decode to the same key; nested objects are checked at their own depth.
    await refused('/v1/score', '{"event":"signup","\\u0065vent":"x"}', 'body.event is sent more than once')
    await refused(
      '/v1/batch/score',
      '{"rows":[{"event":"a"},{"event":"b","device":{"is_headless":true,"is_headless":false}}]}',
      'body.rows[1].device.is_headless is sent more than once',
    )
    // The same key in different objects is fine.
    const ok = await post('/v1/batch/score', '{"rows":[{"event":"a"},{"event":"b"}]}')
    expect(ok.statusCode, ok.body).toBe(200)
  })

  it('__proto__ and constructor.prototype keys are refused naming the field, not as "not valid JSON"', async () => {
    await refused(
      '/v1/score',
      '{"__proto__":{"x":1},"event":"signup"}',
      'body.__proto__ is not an allowed field',
    )
    await refused(
      '/v1/score',
      '{"event":"signup","device":{"constructor":{"prototype":{"x":1}}}}',
      'body.device.constructor.prototype is not an allowed field',
    )
  })

  it(`nesting past ${MAX_JSON_DEPTH} levels is refused at the level it passes, however deep`, async () => {
    const deep = `{"event":"signup","device":${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    await refused(
      '/v1/score',
      deep,
      `body.device${'[0]'.repeat(MAX_JSON_DEPTH - 1)} is nested more than ${MAX_JSON_DEPTH} levels deep`,
    )
  })

  it('keeps what the old parser allowed: a leading byte-order mark, strings that look like keys', async () => {
    const bom = await post('/v1/score', '\ufeff{"event":"signup"}')
    expect(bom.statusCode, bom.body).toBe(200)
    const tricky = await post('/v1/score', '{"event":"{\\"a\\":1,\\"a\\":2}","user_id":"[[[[\\\\"}')
    expect(tricky.statusCode, tricky.body).toBe(200)
  })

  it('empty and malformed bodies are 400 naming the body', async () => {
    await refused('/v1/score', '', 'body is empty; send a JSON object')
    await refused('/v1/score', '{"event":', 'body is not valid JSON')
    await refused('/v1/score', '{"event":"a"}x', 'body is not valid JSON')
  })

  it('checkJsonShape leaves syntax to JSON.parse and passes valid shapes', () => {
    expect(() => checkJsonShape('{"a":[1,{"a":2}],"b":{"a":3}}')).not.toThrow()
    expect(() => checkJsonShape('{"a":"\\"","b":"}"}')).not.toThrow()
    expect(() => checkJsonShape('{{{{')).not.toThrow()
    expect(() => checkJsonShape('{"a":"unterminated')).not.toThrow()
    // Escaped quotes and backslashes do not end a string early: the second "a" is still found.
    expect(() => checkJsonShape('{"a":"x\\"y\\\\","a":1}')).toThrow('body.a is sent more than once')
    expect(() => checkJsonShape('{"a\\"":1,"a\\"":2}')).toThrow('body.a" is sent more than once')
    expect(() => checkJsonShape('{"a":"\\\\u0000","b":"\\u0000"}')).toThrow('body.b must not contain')
  })
})

describe('NUL characters (PostgreSQL text cannot hold them: a 500 there before)', () => {
  it('are refused in any body string, key, query or path value, naming it, on every engine', async () => {
    await refused(
      '/v1/score',
      '{"event":"a\\u0000b"}',
      'body.event must not contain the NUL character (U+0000)',
    )
    await refused(
      '/v1/batch/lists',
      '{"rows":[{"list":"allow","type":"user","value":"ok"},{"list":"allow","type":"user","value":"\\u0000"}]}',
      'body.rows[1].value must not contain the NUL character (U+0000)',
    )
    await refused(
      '/v1/score',
      '{"event":"a","x\\u0000":1}',
      'body.x\u0000 must not contain the NUL character (U+0000)',
    )
    const q = await h.app.inject({ url: '/v1/events?q=a%00b', headers: t.headers })
    expect(q.statusCode, q.body).toBe(400)
    expect(q.json().error).toBe('query.q must not contain the NUL character (U+0000)')
    const p = await h.app.inject({ url: '/v1/device/a%00b/observations', headers: t.headers })
    expect(p.statusCode, p.body).toBe(400)
    expect(p.json().error).toBe('params.deviceId must not contain the NUL character (U+0000)')
    // An escaped backslash before u0000 is not a NUL.
    const ok = await post('/v1/score', '{"event":"a\\\\u0000"}')
    expect(ok.statusCode, ok.body).toBe(200)
  })
})
