import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGN_IN_FAILURES_PER_EMAIL } from '../../src/services/console/console-auth.js'
import { eventually } from '../helpers/app.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { type RunningServer, runCli, startServer } from '../helpers/processes.js'
import { testPrefix } from '../helpers/redis.js'
import { canRunRedisServer, freePort, OwnRedis } from '../helpers/redis-server.js'

// Two real server processes on one PostgreSQL schema and one Redis of the test's own (so it can be
// stopped and started), proving over HTTP that they act as one service.
const ready = (await pgAvailable()) && (await canRunRedisServer())
if (!ready) console.warn('\n*** two-node tests SKIPPED: they need PostgreSQL and redis-server ***\n')

const SECRET = 'two-nodes-test-secret-0123456789-abcdefghijklmnop'
const LEASE_MS = 1500

interface Node {
  server: RunningServer
  url: string
}

let redis: OwnRedis
let drop: () => Promise<void>
let env: Record<string, string>
let a: Node
let b: Node

const start = async (): Promise<Node> => {
  const server = await startServer(env)
  return { server, url: server.url }
}
const cli = (...args: string[]) => {
  const r = runCli(args, env)
  if (r.status !== 0) throw new Error(`verdict ${args.join(' ')} failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as Record<string, string>
}
const get = (n: Node, path: string, key?: string) =>
  fetch(`${n.url}${path}`, { headers: key ? { 'x-api-key': key } : {} })
const post = async (n: Node, path: string, key: string, body: unknown) => {
  const res = await fetch(`${n.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}
/** Health's details need a key (without one it says only its status and a reason code). */
let healthKey: string | undefined
const health = async (n: Node) =>
  (await (await get(n, '/v1/health', healthKey)).json()) as Record<string, unknown>
/** `cond` comes true within `ms` (polled every 25 ms). */
const within = async (ms: number, cond: () => Promise<boolean>) =>
  expect(await eventually(cond, ms, 25)).toBe(true)

describe.skipIf(!ready)('two verdict nodes on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    redis = new OwnRedis(await freePort())
    await redis.start()
    const s = await createSchema()
    drop = s.drop
    env = {
      DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${s.schema}`)}`,
      VERDICT_SECRET: SECRET,
      REDIS_URL: redis.url,
      VERDICT_REDIS_PREFIX: testPrefix(),
      VERDICT_NODES: '2',
      VERDICT_LEASE_TTL_MS: String(LEASE_MS),
      // The tests poll the keyless /v1/health many times a second; the keyless limit is not what they test.
      VERDICT_KEYLESS_RATE_LIMIT: '100000',
      // The webhook test's endpoint is a closed loopback port: nothing is ever delivered there.
      VERDICT_WEBHOOK_ALLOW_PRIVATE: '1',
      LOG_LEVEL: 'info',
    }
    ;[a, b] = await Promise.all([start(), start()])
    healthKey = cli('tenants', 'create', '--name', 'health-reader')['apiKey']
  }, 90_000)

  afterAll(async () => {
    await Promise.all([a?.server.stop(), b?.server.stop()])
    await redis?.stop()
    await drop?.()
  })

  it('a limit of 60/min holds across both nodes: 80 requests, 70 on A and 10 on B, 60 answered', async () => {
    const { apiKey } = cli('tenants', 'create', '--name', 'limited', '--rate-limit', '60')
    const t0 = Date.now()
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        get(i % 8 === 0 ? b : a, '/v1/lists', apiKey).then((r) => ({
          status: r.status,
          limit: r.headers.get('ratelimit-limit'),
        })),
      ),
    )
    const codes = answers.map((r) => r.status)
    // The budget refills one request per second (GCRA): exactly 60 when the burst takes under a
    // second, one more per second it took on a loaded machine. Per-node limits would let all 80 through,
    // and the per-node fallback shares (30 each while Redis is away) only 30 + 10 = 40.
    const refills = Math.floor((Date.now() - t0) / 1000)
    const ok = codes.filter((c) => c === 200).length
    expect(ok).toBeGreaterThanOrEqual(60)
    expect(ok).toBeLessThanOrEqual(60 + refills)
    expect(codes.filter((c) => c === 429)).toHaveLength(80 - ok)
    // Every answer was given against the whole budget, not a node's share of it.
    expect(new Set(answers.map((r) => r.limit))).toEqual(new Set(['60']))
    const h = await health(a)
    expect(h['cluster']).toMatchObject({ limits: 'cluster', redis: 'ok', problem: null })
  })

  it('a key revoked by the CLI fails on both nodes within a second; a block entry added on A applies on B', async () => {
    const { tenantId, apiKey: owner } = cli('tenants', 'create', '--name', 'revocation')
    const { keyId, apiKey } = cli('keys', 'create', '--tenant', tenantId as string)
    expect((await get(b, '/v1/lists', apiKey)).status).toBe(200)
    cli('keys', 'revoke', keyId as string)
    await within(1000, async () => (await get(b, '/v1/lists', apiKey)).status === 401)
    await within(1000, async () => (await get(a, '/v1/lists', apiKey)).status === 401)

    const event = { event: 'login', user_id: 'u-list', email: 'mallory@example.org' }
    expect((await post(b, '/v1/score', owner as string, event)).body['verdict']).not.toBe('block')
    const added = await post(a, '/v1/lists', owner as string, {
      list: 'block',
      type: 'email',
      value: 'mallory@example.org',
    })
    expect(added.status).toBe(200)
    await within(
      1000,
      async () => (await post(b, '/v1/score', owner as string, event)).body['verdict'] === 'block',
    )
  })

  it('an endpoint subscribed on A gets the decisions scored on B; disabled on A, B queues none', async () => {
    const { apiKey } = cli('tenants', 'create', '--name', 'subscriptions')
    const key = apiKey as string
    await post(a, '/v1/lists', key, { list: 'block', type: 'user', value: 'u-hooked' })
    const block = async (n: Node) => {
      const r = await post(n, '/v1/score', key, { event: 'login', user_id: 'u-hooked' })
      expect(r.body['verdict']).toBe('block')
    }
    // B has read the tenant's subscriptions (none) and keeps them in memory.
    await block(b)
    const created = await post(a, '/v1/webhooks', key, {
      url: 'https://127.0.0.1:9/hook',
      events: ['decision.block'],
    })
    expect(created.status).toBe(200)
    const id = created.body['id'] as string
    const deliveries = async () =>
      ((await (await get(a, `/v1/webhooks/${id}/deliveries`, key)).json()) as { total: number }).total
    // Once A's change reaches B (NOTIFY at COMMIT), every decision B scores is queued for the endpoint.
    await within(1000, async () => {
      await block(b)
      return (await deliveries()) > 0
    })
    const seen = await deliveries()
    await block(b)
    await block(a)
    expect(await deliveries()).toBe(seen + 2)
    const disabled = await fetch(`${a.url}/v1/webhooks/${id}`, {
      method: 'PATCH',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(disabled.status).toBe(200)
    const before = await deliveries()
    await block(b)
    expect(await deliveries()).toBe(before)
  })

  it('failed console sign-ins are counted across both nodes: the sixth wrong password is refused on either', async () => {
    const { tenantId } = cli('tenants', 'create', '--name', 'console-guess')
    const password = 'a-long-enough-console-password'
    const made = runCli(
      ['users', 'create', '--tenant', tenantId as string, '--email', 'ops@guess.example', '--password-stdin'],
      env,
      `${password}\n`,
    )
    expect(made.status, made.stderr).toBe(0)
    const signIn = (n: Node, pw: string) =>
      fetch(`${n.url}/console/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ops@guess.example', password: pw }),
      }).then((r) => r.status)
    const codes: number[] = []
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL + 3; i++)
      codes.push(await signIn(i % 2 ? a : b, `guess-${i}`))
    // Per-node throttles would have allowed this many failures on each node, twice as many in all.
    expect(codes.slice(0, SIGN_IN_FAILURES_PER_EMAIL)).toEqual(Array(SIGN_IN_FAILURES_PER_EMAIL).fill(401))
    expect(codes.slice(SIGN_IN_FAILURES_PER_EMAIL)).toEqual([429, 429, 429])
    // Refused before the password is checked, on both nodes, the right one included.
    expect(await signIn(a, password)).toBe(429)
    expect(await signIn(b, password)).toBe(429)
  })

  it('velocity and device reuse count exactly when events alternate, also 50 at once across both', async () => {
    const { apiKey } = cli('tenants', 'create', '--name', 'velocity', '--rate-limit', '100000')
    const score = (n: Node, user: string, ip: string, device?: string) =>
      post(n, '/v1/score', apiKey as string, {
        event: 'signup',
        user_id: user,
        ip,
        ...(device ? { device_id: device } : {}),
      })
    const fired = (r: { body: Record<string, unknown> }) =>
      (r.body['reasons'] as string[]).includes('ip_velocity')

    // One after another, alternating: the 5th distinct account on the IP fires, whichever node gets it.
    const seq = []
    for (let i = 0; i < 6; i++)
      seq.push(await score(i % 2 ? a : b, `seq-${i}`, '198.51.100.77', 'a'.repeat(32)))
    expect(seq.map(fired)).toEqual([false, false, false, false, true, true])
    expect(seq.map((r) => (r.body['device'] as { account_count: number }).account_count)).toEqual([
      1, 2, 3, 4, 5, 6,
    ])

    // 50 at once, split across the nodes: exactly as if one node had taken them in some order.
    const burst = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        score(i % 2 ? a : b, `burst-${i}`, '198.51.100.78', 'b'.repeat(32)),
      ),
    )
    expect(burst.every((r) => r.status === 200)).toBe(true)
    expect(burst.filter(fired)).toHaveLength(46)
    const counts = burst.map((r) => (r.body['device'] as { account_count: number }).account_count)
    expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    // The IP alone (no device rows the events could meet on), at once across both nodes.
    const ipOnly = await Promise.all(
      Array.from({ length: 50 }, (_, i) => score(i % 2 ? a : b, `ip-${i}`, '198.51.100.79')),
    )
    expect(ipOnly.filter(fired)).toHaveLength(46)
    // A device on 50 networks at once: its account count is exact too.
    const roaming = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        score(i % 2 ? a : b, `roam-${i}`, `203.0.113.${i + 1}`, 'c'.repeat(32)),
      ),
    )
    const roamCounts = roaming.map((r) => (r.body['device'] as { account_count: number }).account_count)
    expect([...roamCounts].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
  }, 60_000)

  it('a monthly quota holds exactly across both nodes: 60 scores at once for 37 units', async () => {
    const { tenantId, apiKey } = cli(
      'tenants',
      'create',
      '--name',
      'quota',
      '--rate-limit',
      '100000',
      '--monthly-quota',
      '37',
    )
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(i % 2 ? a : b, '/v1/score', apiKey as string, { event: 'login', user_id: `q-${i}` }),
      ),
    )
    expect(answers.filter((r) => r.status === 200)).toHaveLength(37)
    const refused = answers.filter((r) => r.status === 429)
    expect(refused).toHaveLength(23)
    for (const r of refused) expect(r.body['error']).toMatch(/monthly quota of 37/)
    // The meter says what was recorded: 37 events, 37 units, nothing for the refused requests.
    const events = await get(a, '/v1/events?limit=100', apiKey)
    expect(((await events.json()) as { total: number }).total).toBe(37)
    const db = new pg.Client({ connectionString: env['DATABASE_URL'] })
    await db.connect()
    try {
      const rows = (await db.query('SELECT used FROM usage WHERE tenant_id = $1', [tenantId])).rows
      expect(rows.map((r) => Number(r.used))).toEqual([37])
    } finally {
      await db.end()
    }
  }, 60_000)

  it('Redis stopped: scoring goes on, health is degraded, limits hold per node; back: shared again', async () => {
    await redis.stop()
    await within(5000, async () => (await health(a))['status'] === 'degraded')
    const down = await health(a)
    expect(down['cluster']).toMatchObject({ limits: 'node', redis: 'unreachable' })
    expect(down['database']).toMatchObject({ reachable: true })

    const { apiKey } = cli('tenants', 'create', '--name', 'redis-down', '--rate-limit', '20')
    const scored = await post(b, '/v1/score', apiKey as string, { event: 'login', user_id: 'u-down' })
    expect(scored.status).toBe(200)
    // Two nodes configured: each enforces 20 / 2 = 10 on its own.
    // (A per-node budget of 10 refills one request every 6 s; a slow burst may see that refill.)
    let t0 = Date.now()
    const alone = await Promise.all(
      Array.from({ length: 15 }, () => get(a, '/v1/lists', apiKey).then((r) => r.status)),
    )
    const aloneOk = alone.filter((c) => c === 200).length
    expect(aloneOk).toBeGreaterThanOrEqual(10)
    expect(aloneOk).toBeLessThanOrEqual(10 + Math.floor((Date.now() - t0) / 6000))

    await redis.start()
    await within(
      10_000,
      async () => (await health(a))['status'] === 'ok' && (await health(b))['status'] === 'ok',
    )
    const { apiKey: fresh } = cli('tenants', 'create', '--name', 'redis-back', '--rate-limit', '20')
    // Shared again: one node alone may spend the whole budget of 20 (refilling one every 3 s), where its
    // per-node share would stop it at 10.
    t0 = Date.now()
    const shared = await Promise.all(
      Array.from({ length: 30 }, () => get(a, '/v1/lists', fresh).then((r) => r.status)),
    )
    const sharedOk = shared.filter((c) => c === 200).length
    expect(sharedOk).toBeGreaterThanOrEqual(20)
    expect(sharedOk).toBeLessThanOrEqual(20 + Math.floor((Date.now() - t0) / 3000))
  }, 60_000)

  it('the background jobs run on one node; killing it hands them to the other within the lease', async () => {
    // An answer without the cluster block (a node busy starting or stopping) counts as "not yet".
    const cluster = async (n: Node) => {
      const res = await get(n, '/v1/health', healthKey)
      const body = (await res.json()) as { cluster?: { jobs: string[] } }
      return { jobs: res.status === 200 && body.cluster ? body.cluster.jobs : [] }
    }
    const poll = async (ms: number, cond: () => Promise<boolean>) =>
      expect(await eventually(cond, ms, 200)).toBe(true)
    // The nodes may share the jobs out between them: follow the node that holds collision-risk.
    let ja: string[] = []
    let jb: string[] = []
    await poll(LEASE_MS * 2, async () => {
      ja = (await cluster(a)).jobs
      jb = (await cluster(b)).jobs
      return [...ja, ...jb].includes('collision-risk')
    })
    // Never both: each cluster job is held by exactly one node.
    expect(ja.filter((j) => jb.includes(j))).toEqual([])
    const [holder, other, jobs] = ja.includes('collision-risk') ? [a, b, ja] : [b, a, jb]
    await holder.server.signal('SIGKILL')
    // The lease expires LEASE_MS after its last renewal; the other node renews every third of that.
    await poll(LEASE_MS * 2 + 1000, async () => {
      const held = (await cluster(other)).jobs
      return jobs.every((j) => held.includes(j))
    })
  }, 30_000)
})
