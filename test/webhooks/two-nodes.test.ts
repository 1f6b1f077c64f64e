import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant } from '../../src/services/access/tenants.js'
import { WebhookDispatcher } from '../../src/services/webhooks/dispatcher.js'
import { emit } from '../../src/services/webhooks/events.js'
import { newSecret } from '../../src/services/webhooks/signing.js'
import { openStore, type Store } from '../../src/store/index.js'
import { ManualClock } from '../../src/util/clock.js'
import { createSchema, PG_URL, pgAvailable } from '../helpers/pg.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

const hasPg = await pgAvailable()
const MESSAGES = 40

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** Two stores over one database: two nodes, each with its own connections. */
async function twoStores(engine: 'sqlite' | 'postgres') {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-wh-'))
    const file = join(dir, 'verdict.db')
    const a = await openStore({ kind: 'sqlite', file })
    const b = await openStore({ kind: 'sqlite', file })
    return { a, b, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const { schema, drop } = await createSchema()
  const a = await openStore({ kind: 'postgres', url: PG_URL }, { pgSchema: schema })
  const b = await openStore({ kind: 'postgres', url: PG_URL }, { pgSchema: schema })
  return { a, b, drop }
}

describe.each(['sqlite', 'postgres'] as const)('two nodes sending one outbox on %s', (engine) => {
  const skip = engine === 'postgres' && !hasPg
  let a: Store
  let b: Store
  let drop: () => Promise<void>
  let rx: Receiver
  const clock = new ManualClock(Date.now())
  let tenantId: string

  beforeAll(async () => {
    if (skip) return
    rx = await startReceiver({ delayMs: 150 })
    ;({ a, b, drop } = await twoStores(engine))
    tenantId = (await createTenant(a, clock, { name: 'two-nodes' })).tenantId
    await a.webhookEndpoints.create({
      id: 'ep_000000000000000000000001',
      tenantId,
      url: rx.url,
      description: '',
      events: ['list.entry_added'],
      enabled: true,
      disabledReason: null,
      secret: newSecret(),
      createdMs: clock.now(),
      updatedMs: clock.now(),
    })
  })
  afterAll(async () => {
    if (skip) return
    await a.close()
    await b.close()
    await drop()
    await rx.close()
  })

  const node = (store: Store, holder: string) =>
    new WebhookDispatcher(store, clock, {
      allowHttp: false,
      allowPrivate: true,
      ca: [rx.ca],
      holder,
      batch: 4,
    })

  async function enqueue(n: number) {
    for (let i = 0; i < n; i++)
      await a.db.tx(() =>
        emit(a.webhookOutbox, tenantId, clock.now(), 'list.entry_added', { entry_id: String(i) }),
      )
  }

  it.skipIf(skip)('never sends one message from both at once, and sends each once', async () => {
    await enqueue(MESSAGES)
    const nodes = [node(a, 'node-a'), node(b, 'node-b')]
    // Both nodes claim and send in rounds at the same time until neither finds anything due.
    const loop = async (d: WebhookDispatcher) => {
      let idle = 0
      while (idle < 2) idle = (await d.runOnce()) > 0 ? 0 : idle + 1
    }
    await Promise.all(nodes.map(loop))
    const ids = rx.received.map((r) => r.headers['webhook-id'])
    expect(new Set(ids).size).toBe(MESSAGES)
    expect(ids).toHaveLength(MESSAGES)
    expect(Math.max(...rx.received.map((r) => r.concurrent))).toBe(1)
  })

  it.skipIf(skip)(
    "an endpoint created or disabled on one node changes the other's subscriptions",
    async () => {
      const read = async (store: Store) => {
        // As a request does on arrival: SQLite notices the other connection's commits here.
        store.invalidation.poll()
        return [...(await store.webhookEndpoints.subscribedTypes(tenantId))].sort()
      }
      expect(await read(b)).toEqual(['list.entry_added'])
      const id = 'ep_000000000000000000000002'
      await a.webhookEndpoints.create({
        id,
        tenantId,
        url: rx.url,
        description: '',
        events: ['decision.block'],
        enabled: true,
        disabledReason: null,
        secret: newSecret(),
        createdMs: clock.now(),
        updatedMs: clock.now(),
      })
      // PostgreSQL tells the other node at COMMIT (NOTIFY); SQLite's next request sees the file changed.
      await expect
        .poll(() => read(b), { timeout: 2000, interval: 20 })
        .toEqual(['decision.block', 'list.entry_added'])
      await a.db.tx(() => a.webhookEndpoints.disable(id, 'failing', clock.now()))
      await expect.poll(() => read(b), { timeout: 2000, interval: 20 }).toEqual(['list.entry_added'])
      await a.webhookEndpoints.remove(tenantId, id)
    },
  )

  it.skipIf(skip)("takes over a dead node's claimed deliveries once its lease expires", async () => {
    rx.received.splice(0)
    await enqueue(5)
    // A node claims them and dies before sending.
    const claimed = await a.webhookOutbox.claim('dead-node', clock.now(), clock.now() + 30_000, 100)
    expect(claimed).toHaveLength(5)
    const survivor = node(b, 'node-b')
    expect(await survivor.runOnce()).toBe(0)
    clock.advance(30_001)
    let sent = 0
    for (let n = await survivor.runOnce(); n > 0; n = await survivor.runOnce()) sent += n
    expect(sent).toBe(5)
    expect(rx.received).toHaveLength(5)
    // The dead node's late report is ignored: the delivery is no longer its own.
    const late = await a.db.tx(() =>
      a.webhookOutbox.finish(
        claimed[0]!.id,
        'dead-node',
        { kind: 'failed', status: 500, error: 'late' },
        clock.now(),
      ),
    )
    expect(late).toBe(false)
  })
})
