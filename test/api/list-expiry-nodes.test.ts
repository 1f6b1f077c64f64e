import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { App } from '../../src/routes/types.js'
import { openStore, type Store } from '../../src/store/index.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { testIntel } from '../helpers/intel.js'
import { pgAvailable, TEMPLATE_SCHEMA } from '../helpers/pg.js'

const hasPg = await pgAvailable()

/**
 * Issue 28: an expired list entry stops matching on the next request on every node, including a node
 * that had the entry in its list cache (the entry was added through the other node).
 */
describe.each<Engine>(['sqlite', 'postgres'])('a list entry expiring across two nodes on %s', (engine) => {
  let h: Harness | undefined
  let storeB: Store | undefined
  let appB: App | undefined
  afterEach(async () => {
    await appB?.close()
    await storeB?.close()
    await h?.close()
    h = storeB = appB = undefined
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'stops matching on the other node too, at its expiry',
    async () => {
      h = await build({ engine })
      h.clock.set(1_800_000_000_000)
      // Node B: its own store (its own connections and caches) over the same database, the same clock.
      storeB =
        engine === 'sqlite'
          ? await openStore({ kind: 'sqlite', file: join(h.dir, 'verdict.db') })
          : await openStore({ kind: 'postgres', url: h.pgUrl! }, { pgSchema: TEMPLATE_SCHEMA })
      appB = await buildApp({
        store: storeB,
        clock: h.clock,
        hasher: h.hasher,
        intel: (await testIntel()).intel,
      })
      const t = await h.tenant()
      const on = (app: App) => (method: 'POST', url: string, payload: object) =>
        app.inject({ method, url, headers: t.headers, payload })
      const expires = h.clock.now() + 60_000
      const added = await on(h.app)('POST', '/v1/lists', {
        list: 'block',
        type: 'user',
        value: 'u-two',
        expires_ms: expires,
      })
      expect(added.statusCode).toBe(200)
      const scoreOnB = async () =>
        (await on(appB!)('POST', '/v1/score', { event: 'login', user_id: 'u-two' })).json()
      // Node B sees the entry (and now holds the tenant's lists in its cache) until the expiry.
      expect((await scoreOnB()).verdict).toBe('block')
      h.clock.set(expires - 1)
      expect((await scoreOnB()).verdict).toBe('block')
      h.clock.set(expires)
      const after = await scoreOnB()
      expect(after.verdict).toBe('allow')
      expect(after.reasons).not.toContain('blocklisted_user')
    },
  )
})
