import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { render } from '../../clients/typescript/scripts/render.mjs'
import { createVerdictClient, type ScoreResponse, VerdictError } from '../../clients/typescript/src/index.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

/** The TypeScript client (clients/typescript), against a real verdict listening on a port (issue 30, item 14). */
let h: Harness
let t: TestTenant
let baseUrl: string

beforeAll(async () => {
  h = await build()
  t = await h.tenant()
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await h.close()
})

/** A fetch that records each attempt's Idempotency-Key and status, and may answer some attempts itself. */
function recordingFetch(fake: (n: number) => Response | null = () => null) {
  const attempts: { key: string | null; status: number }[] = []
  const fetch = async (request: Request) => {
    const faked = fake(attempts.length)
    const res = faked ?? (await globalThis.fetch(request))
    attempts.push({ key: request.headers.get('idempotency-key'), status: res.status })
    return res
  }
  return { fetch, attempts }
}

describe('the committed types are those of the served document', () => {
  it('regenerates clients/typescript/src/schema.ts without a difference (npm run generate --prefix clients/typescript)', async () => {
    const doc = (await h.app.inject({ url: '/v1/openapi.json' })).json()
    const committed = readFileSync(
      join(import.meta.dirname, '..', '..', 'clients', 'typescript', 'src', 'schema.ts'),
      'utf8',
    )
    expect(await render(doc)).toBe(committed)
  })
})

describe('the client against a real server', () => {
  it('scores, lists, reads and labels events with named types', async () => {
    const client = createVerdictClient({ baseUrl, apiKey: t.apiKey })
    const scored: ScoreResponse = await client.score({
      event: 'signup',
      user_id: 'client-u1',
      ip: '73.162.10.20',
    })
    expect(['allow', 'review', 'block']).toContain(scored.verdict)
    const batch = await client.batchScore([
      { event: 'login', user_id: 'client-u1' },
      { event: 'login', user_id: 'client-u2' },
    ])
    expect(batch).toHaveLength(2)
    const page = await client.events.list({ user_id: 'client-u1' })
    expect(page.events.map((e) => e.id)).toContain(scored.event_id)
    expect(page.total).toBe(2)
    const label = await client.label({ label: 'fraud', event_id: scored.event_id })
    expect(label.label).toBe('fraud')
    const detail = await client.events.get(scored.event_id)
    expect(detail.labels.map((l) => l.label_id)).toEqual([label.label_id])
  })

  it('throws a VerdictError with the code and the request id of the answer', async () => {
    const wrong = createVerdictClient({ baseUrl, apiKey: 'sk_wrong' })
    const err = await wrong.events.list().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(VerdictError)
    expect(err).toMatchObject({ status: 401, code: 'unauthorized' })
    expect((err as VerdictError).request_id).toMatch(/^req_/)
    const client = createVerdictClient({ baseUrl, apiKey: t.apiKey })
    const bad = await client.score({ event: '' }).catch((e: unknown) => e)
    expect(bad).toMatchObject({ status: 400, code: 'bad_request' })
    expect((bad as VerdictError).message).toContain('body.event')
    const missing = await client.events.get('no-such-event').catch((e: unknown) => e)
    expect(missing).toMatchObject({ status: 404, code: 'not_found' })
  })

  it('retries a 429 after Retry-After with the same Idempotency-Key, so the event counts once', async () => {
    const limited = await h.tenant({ rateLimit: 1 })
    const slept: number[] = []
    const { fetch, attempts } = recordingFetch()
    const client = createVerdictClient({
      baseUrl,
      apiKey: limited.apiKey,
      fetch,
      // The server's clock is the harness's: waiting is moving it on.
      // One request a minute: Retry-After is up to 60 s, longer than the default 30 s cap.
      retry: {
        maxDelayMs: 120_000,
        sleep: async (ms) => {
          slept.push(ms)
          h.clock.advance(ms)
        },
      },
    })
    await client.score({ event: 'signup', user_id: 'retry-u' })
    const second = await client.score({ event: 'signup', user_id: 'retry-u' })
    expect(second.event_id).toBeTruthy()
    expect(attempts.map((a) => a.status)).toEqual([200, 429, 200])
    expect(attempts[1]!.key).toBe(attempts[2]!.key)
    expect(attempts[0]!.key).not.toBe(attempts[1]!.key)
    expect(slept).toHaveLength(1)
    expect(slept[0]).toBeGreaterThan(0)
    // Without the raised cap, a Retry-After that long is not waited for: the 429 is the answer.
    const impatient = createVerdictClient({
      baseUrl,
      apiKey: limited.apiKey,
      retry: { sleep: async () => {} },
    })
    await expect(impatient.usage()).rejects.toMatchObject({ status: 429, code: 'rate_limited' })
    h.clock.advance(120_000)
    const page = await createVerdictClient({ baseUrl, apiKey: limited.apiKey }).events.list({
      user_id: 'retry-u',
    })
    expect(page.total).toBe(2)
  })

  it('retries a 503 with backoff, and gives up after maxRetries with the last error', async () => {
    const unavailable = () =>
      new Response(
        JSON.stringify({ error: 'overloaded, retry shortly', code: 'unavailable', request_id: 'req_x' }),
        {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
        },
      )
    const once = recordingFetch((n) => (n === 0 ? unavailable() : null))
    const slept: number[] = []
    const sleep = async (ms: number) => {
      slept.push(ms)
    }
    const client = createVerdictClient({ baseUrl, apiKey: t.apiKey, fetch: once.fetch, retry: { sleep } })
    await client.score({ event: 'signup' })
    expect(once.attempts.map((a) => a.status)).toEqual([503, 200])
    expect(once.attempts[0]!.key).toBe(once.attempts[1]!.key)
    expect(slept).toEqual([1000])

    const always = recordingFetch(() => unavailable())
    const stuck = createVerdictClient({
      baseUrl,
      apiKey: t.apiKey,
      fetch: always.fetch,
      retry: { sleep, maxRetries: 2 },
    })
    const err = await stuck.usage().catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 503, code: 'unavailable', request_id: 'req_x', retryAfterMs: 1000 })
    expect(always.attempts).toHaveLength(3)
  })
})
