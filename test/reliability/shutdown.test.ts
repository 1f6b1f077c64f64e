import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'
import { LoopbackDns } from '../helpers/dns-server.js'
import { firstStartKey, startServer } from '../helpers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-shutdown-'))
// Mail domains whose DNS never answers: a score of one stays in flight until the DNS deadline.
const SLOW = Array.from({ length: 6 }, (_, i) => `slow${i}.example.net`)
const dns = new LoopbackDns(Object.fromEntries(SLOW.map((d) => [d, { silent: true }])))
beforeAll(() => dns.start())
afterAll(async () => {
  await dns.stop()
  rmSync(dir, { recursive: true, force: true })
})

const apiKeyOf = (logs: string): string => firstStartKey(logs)!

describe('SIGTERM with scores in flight', () => {
  it('every score in flight completes and is durable; new connections are refused; exit 0', async () => {
    const env = {
      DATABASE_URL: join(dir, 'verdict.db'),
      VERDICT_DNS_SERVERS: dns.server,
      VERDICT_DNS_TIMEOUT_MS: '1500',
      VERDICT_SHUTDOWN_MS: '20000',
    }
    const server = await startServer(env)
    const apiKey = apiKeyOf(server.logs())
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' }
    let answered = 0
    const inFlight = SLOW.map((d, i) =>
      fetch(`${server.url}/v1/score`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ event: 'signup', user_id: `drain-${i}`, email: `someone@${d}` }),
      }).then(async (r) => {
        answered++
        return { status: r.status, body: (await r.json()) as { event_id: string } }
      }),
    )
    const allAsked = () => SLOW.every((d) => dns.count(d, 'MX') > 0)
    expect(await eventually(allAsked, 10_000, 20), 'every score in flight reached its DNS lookup').toBe(true)
    const exited = server.signal('SIGTERM')
    // The listener closes at once: a new connection is refused while the running scores finish.
    // Polled (any HTTP answer, 503 while draining included, means the listener is still open: "not
    // yet"; a reset means the connection sat in the accept queue as the listener closed: the next try
    // is refused), within a bound.
    let late: number | string = 'not tried'
    const refused = await eventually(
      async () => {
        late = await fetch(`${server.url}/v1/health`, { headers: { connection: 'close' } }).then(
          (r) => r.status,
          (e: Error) => (e.cause as { code?: string } | undefined)?.code ?? e.message,
        )
        return late === 'ECONNREFUSED'
      },
      5_000,
      10,
    )
    expect(refused, `new connections still answered 5 s after SIGTERM (last: ${late})`).toBe(true)
    expect(late).toBe('ECONNREFUSED')
    expect(answered, 'the listener closed only after the scores in flight had finished').toBe(0)
    const answers = await Promise.all(inFlight)
    for (const a of answers) expect(a.status).toBe(200)
    expect(await exited).toBe(0)
    // Durable: after a restart every answered event is there.
    const again = await startServer(env)
    try {
      const res = await fetch(`${again.url}/v1/events?q=drain-&limit=50`, {
        headers: { 'x-api-key': apiKey },
      })
      const listed = ((await res.json()) as { events: { id: string }[] }).events.map((e) => e.id)
      expect(listed.sort()).toEqual(answers.map((a) => a.body.event_id).sort())
    } finally {
      await again.stop()
    }
  }, 60_000)
})
