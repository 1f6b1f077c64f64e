import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import type { App } from '../src/routes/types.js'
import { createTenant } from '../src/services/access/tenants.js'
import type { Store } from '../src/store/index.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'

/**
 * The app in-process over `store`, the installed reference data with a loopback DNS, and one tenant
 * without limits: what the in-process benches (pages, trips) score through. `close` stops the app and
 * the DNS; the store stays the caller's.
 */
export async function scoringApp(store: Store, tenantName: string) {
  const dns = await startBenchDns()
  const intel = await loadIntel({
    feedsDir: loadSettings().feeds.dir,
    email: { mx: { servers: [dns.server] } },
  })
  const clock = { now: () => Date.now() }
  const app: App = await buildApp({ store, clock, hasher: new Hasher('bench-secret'), intel })
  const { apiKey } = await createTenant(store, clock, { name: tenantName, rateLimit: 1e9, monthlyQuota: 1e9 })
  const post = (payload: object) =>
    app.inject({ method: 'POST', url: '/v1/score', headers: { 'x-api-key': apiKey }, payload })
  return {
    post,
    close: async () => {
      await app.close()
      dns.stop()
    },
  }
}
