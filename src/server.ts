import { createExplainer } from './ai/index.js'
import { buildApp } from './app.js'
import { loadSettings } from './config/settings.js'
import { feedStatus } from './intel/feeds/update.js'
import { type Intel, loadIntel } from './intel/index.js'
import { bootstrapDefaultTenant } from './services/tenants.js'
import { openStore } from './store/index.js'
import { resolveSecret } from './store/secret.js'
import { systemClock } from './util/clock.js'
import { Hasher } from './util/secrets.js'
import { packageVersion } from './version.js'

/**
 * Picks up feeds refreshed by `verdict feeds update|import` (possibly from another process) by
 * polling their metadata files, which is cheap; the data itself is only re-read when it changed.
 */
function watchFeeds(intel: Intel, everyMs: number, log: (msg: string) => void): void {
  let last = ''
  const signature = async () =>
    (await feedStatus(intel.ip.feedsDir)).map((f) => `${f.name}:${f.fetchedAt}`).join(',')
  void signature().then((s) => {
    last = s
  })
  setInterval(async () => {
    try {
      const now = await signature()
      if (now === last) return
      last = now
      await intel.ip.reload()
      log('reloaded IP feeds')
    } catch (err) {
      log(`feed reload failed: ${(err as Error).message}`)
    }
  }, everyMs).unref()
}

async function main(): Promise<void> {
  const settings = loadSettings()
  const store = await openStore(settings.storage)
  const secret = await resolveSecret(store, settings.storage, settings.secret)
  const clock = systemClock
  const intel = await loadIntel({
    email: { mx: { now: () => clock.now(), timeoutMs: settings.dnsTimeoutMs } },
  })
  const app = await buildApp({
    intel,
    explainer: createExplainer(process.env, { now: () => clock.now() }),
    store,
    clock,
    hasher: new Hasher(secret),
    version: packageVersion(),
    trustProxy: settings.trustProxy,
    bodyLimitBytes: settings.bodyLimitBytes,
    keylessRateLimit: settings.keylessRateLimit,
    logger: { level: settings.logLevel },
  })
  watchFeeds(intel, settings.feedsReloadMs, (msg) => app.log.info(msg))
  const refreshAsn = () =>
    app.jobs.refreshAsnRates().catch((err: Error) => app.log.warn(`ASN rates: ${err.message}`))
  void refreshAsn()
  setInterval(refreshAsn, 60_000).unref()
  const created = await bootstrapDefaultTenant(store, clock)
  if (created) {
    app.log.info(
      { tenant: created.tenantId, key_id: created.keyId, api_key: created.apiKey },
      'first start: created tenant "default"; its api_key is shown only this once',
    )
  }
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down')
    await app.close()
    await store.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  await app.listen({ host: settings.host, port: settings.port })
}

main().catch((err: unknown) => {
  process.stderr.write(`verdict: failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
