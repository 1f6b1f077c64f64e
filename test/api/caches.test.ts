import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openStore, type Store } from '../../src/store/index.js'
import { eventually } from '../helpers/app.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { runCli } from '../helpers/processes.js'

const hasPg = await pgAvailable()

let h: Harness
let second: Store | undefined
afterEach(async () => {
  await second?.close()
  second = undefined
  await h?.close()
})

const status = async (t: TestTenant) =>
  (await h.app.inject({ url: '/v1/lists', headers: t.headers })).statusCode
const score = async (t: TestTenant, payload: object) => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers: t.headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as { score: number; verdict: string; reasons: string[] }
}
/** A datacenter IP: a non-zero score whose verdict the thresholds decide. */
const EVENT = { event: 'signup', user_id: 'u-1', ip: '8.8.8.8' }

/** PostgreSQL caches keep nothing until the LISTEN connection is up; wait for it so they are really on. */
async function cachesOn(): Promise<void> {
  expect(await eventually(() => h.store.invalidation.healthy, 10_000)).toBe(true)
}

describe.each<Engine>(['sqlite', 'postgres'])('caches on %s, writes of this process', (engine) => {
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('a revoked key answers 401 on the very next request after it was cached', async () => {
    h = await build({ engine })
    await cachesOn()
    const t = await h.tenant()
    const other = await h.tenant()
    expect(await status(t)).toBe(200)
    expect(await status(t)).toBe(200)
    expect(await status(other)).toBe(200)
    expect(await h.store.tenants.revokeKey(t.keyId, h.clock.now())).toBe(true)
    expect(await status(t)).toBe(401)
    expect(await status(other)).toBe(200)
  })

  run('a list entry and a config change apply to the very next score', async () => {
    h = await build({ engine })
    await cachesOn()
    const t = await h.tenant()
    const before = await score(t, EVENT)
    expect(before.score).toBeGreaterThan(0)
    expect(before.reasons).not.toContain('blocklisted_user')
    // A second score reuses the engine config built from the cached copy (score-inputs.ts engineConfig).
    expect((await score(t, EVENT)).verdict).toBe(before.verdict)
    const put = await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { thresholds: { review: 1, block: 1 } },
    })
    expect(put.statusCode, put.body).toBe(200)
    expect((await score(t, EVENT)).verdict).toBe('block')
    const added = await h.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: t.headers,
      payload: { list: 'block', type: 'user', value: 'u-1' },
    })
    expect(added.statusCode, added.body).toBe(200)
    expect((await score(t, EVENT)).reasons).toContain('blocklisted_user')
  })
})

describe('caches on sqlite, writes of another process', () => {
  it('a key revoked with the CLI answers 401 on the next request', async () => {
    h = await build()
    const t = await h.tenant()
    expect(await status(t)).toBe(200)
    expect(await status(t)).toBe(200)
    const revoked = runCli(['keys', 'revoke', t.keyId], {
      DATABASE_URL: `sqlite:${join(h.dir, 'verdict.db')}`,
    })
    expect(revoked.status, revoked.stderr).toBe(0)
    expect(await status(t)).toBe(401)
  })

  it('a list entry and a config override written by another connection apply to the next score', async () => {
    h = await build()
    const t = await h.tenant()
    const before = await score(t, EVENT)
    expect(before.verdict).not.toBe('block')
    second = await openStore({ kind: 'sqlite', file: join(h.dir, 'verdict.db') })
    await second.config.set(
      t.tenantId,
      { weights: {}, thresholds: { review: 1, block: 1 } },
      () => {},
      JSON.stringify,
      Date.now(),
    )
    expect((await score(t, EVENT)).verdict).toBe('block')
    await second.lists.addMany(t.tenantId, [{ list: 'block', type: 'user', valueKey: 'u-1', hint: 'u-1' }], 1)
    expect((await score(t, EVENT)).reasons).toContain('blocklisted_user')
  })
})

describe('caches on postgres, writes of another node', () => {
  // Delivery over LISTEN/NOTIFY is asynchronous: the change must arrive within this bound.
  const PROPAGATION_MS = 1000

  it.skipIf(!hasPg)('a key revocation, a blocklist entry and a config override reach this node', async () => {
    h = await build({ engine: 'postgres' })
    await cachesOn()
    const t = await h.tenant()
    const other = await h.tenant()
    expect(await status(t)).toBe(200)
    expect(await status(other)).toBe(200)
    expect((await score(other, EVENT)).verdict).not.toBe('block')
    const row = await h.store.db.get<{ s: string }>('SELECT current_schema() AS s')
    second = await openStore({ kind: 'postgres', url: h.pgUrl! }, { pgSchema: row!.s, listen: false })

    await second.tenants.revokeKey(t.keyId, h.clock.now())
    expect(await eventually(async () => (await status(t)) === 401, PROPAGATION_MS)).toBe(true)
    expect(await status(other)).toBe(200)

    await second.lists.addMany(
      other.tenantId,
      [{ list: 'block', type: 'user', valueKey: 'u-1', hint: 'u-1' }],
      h.clock.now(),
    )
    expect(
      await eventually(
        async () => (await score(other, EVENT)).reasons.includes('blocklisted_user'),
        PROPAGATION_MS,
      ),
    ).toBe(true)

    await second.config.set(
      other.tenantId,
      { weights: {}, thresholds: { review: 1, block: 1 } },
      () => {},
      JSON.stringify,
      Date.now(),
    )
    expect(
      await eventually(async () => {
        const s = await score(other, { ...EVENT, user_id: 'u-2' })
        return s.verdict === 'block'
      }, PROPAGATION_MS),
    ).toBe(true)
  })
})
