import { afterEach, describe, expect, it } from 'vitest'
import { Metrics } from '../../src/observability/metrics.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { parseExposition, total } from '../observability/scrape.js'

const TOKEN = 'operator-token-0123456789'
const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])('webhook metrics on %s', (engine) => {
  let h: Harness | undefined
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await h?.close()
    await close?.()
    h = undefined
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'shows retrying, delivered and the age of the oldest undelivered message as they change',
    async () => {
      const statuses = [500]
      const rx = await startReceiver({ answer: () => statuses.shift() ?? 200 })
      close = rx.close
      h = await build({
        engine,
        webhooks: { allowHttp: false, allowPrivate: true, ca: [rx.ca] },
        observability: { metrics: new Metrics(), metricsToken: TOKEN },
      })
      h.clock.set(Date.now())
      const t = await h.tenant()
      const scrape = async () =>
        parseExposition(
          (await h!.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body,
        )
      const api = (method: 'POST', url: string, payload: object) =>
        h!.app.inject({ method, url, headers: t.headers, payload })
      expect(
        (await api('POST', '/v1/webhooks', { url: rx.url, events: ['list.entry_added'] })).statusCode,
      ).toBe(200)
      expect((await api('POST', '/v1/lists', { list: 'block', type: 'user', value: 'm-1' })).statusCode).toBe(
        200,
      )
      await h.services.webhooks.runOnce()
      h.clock.advance(3000)
      let m = await scrape()
      expect(total(m, 'verdict_webhook_deliveries', { state: 'retrying' })).toBe(1)
      expect(total(m, 'verdict_webhook_deliveries', { state: 'delivered' })).toBe(0)
      expect(total(m, 'verdict_webhook_oldest_undelivered_seconds')).toBeGreaterThanOrEqual(3)
      h.clock.advance(10_000)
      while ((await h.services.webhooks.runOnce()) > 0) {}
      m = await scrape()
      expect(total(m, 'verdict_webhook_deliveries', { state: 'retrying' })).toBe(0)
      expect(total(m, 'verdict_webhook_deliveries', { state: 'delivered' })).toBe(1)
      expect(total(m, 'verdict_webhook_oldest_undelivered_seconds')).toBe(0)
    },
  )
})
