import { createExplainer } from './ai/index.js'
import { buildApp } from './app.js'
import { loadSettings } from './config/settings.js'
import { feedStatus } from './intel/feeds/update.js'
import { type Intel, loadIntel } from './intel/index.js'
import { withStartupLock } from './services/startup-lock.js'
import { bootstrapDefaultTenant } from './services/tenants.js'
import { openStore } from './store/index.js'
import { resolveSecret } from './store/secret.js'
import { systemClock } from './util/clock.js'
import { Hasher } from './util/secrets.js'
import { packageVersion } from './version.js'

interface Log {
  info(msg: string): void
  warn(msg: string): void
}

/**
 * Picks up feeds refreshed by `verdict feeds update|import` (possibly from another process) by
 * polling their metadata files, which is cheap; the data itself is only re-read when it changed.
 * An unreadable metadata file is logged and retried on the next poll, never fatal.
 */
function watchFeeds(intel: Intel, everyMs: number, log: Log): void {
  let last = ''
  const signature = async () =>
    (await feedStatus(intel.ip.feedsDir)).map((f) => `${f.name}:${f.fetchedAt}`).join(',')
  signature().then(
    (s) => {
      last = s
    },
    (err: Error) => log.warn(`feed metadata unreadable: ${err.message}`),
  )
  setInterval(async () => {
    try {
      const now = await signature()
      if (now === last) return
      last = now
      await intel.ip.reload()
      log.info('reloaded IP feeds')
    } catch (err) {
      log.warn(`feed reload failed: ${(err as Error).message}`)
    }
  }, everyMs).unref()
}

async function main(): Promise<void> {
  const settings = loadSettings()
  // Concurrent first starts: one process migrates (and below, creates tenant `default`), the others wait.
  const store = await withStartupLock(settings.storage, () => openStore(settings.storage))
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
  watchFeeds(intel, settings.feedsReloadMs, app.log)
  const refreshAsn = () =>
    app.jobs.refreshAsnRates().catch((err: Error) => app.log.warn(`ASN rates: ${err.message}`))
  void refreshAsn()
  setInterval(refreshAsn, 60_000).unref()
  // Retention: trap hits past their 30-day window no longer count; delete them.
  const pruneTraps = () =>
    store.network
      .pruneTraps(clock.now())
      .catch((err: Error) => app.log.warn(`trap retention: ${err.message}`))
  void pruneTraps()
  setInterval(pruneTraps, 3600_000).unref()
  const created = await withStartupLock(settings.storage, () => bootstrapDefaultTenant(store, clock))
  if (created) {
    app.log.info(
      { tenant: created.tenantId, key_id: created.keyId, api_key: created.apiKey },
      'first start: created tenant "default"; its api_key is shown only this once',
    )
  }
  // Stop accepting, let in-flight requests finish, close storage; past the deadline, exit anyway.
  const shutdown = async (signal: string) => {
    app.log.info({ signal, deadline_ms: settings.shutdownMs }, 'shutting down')
    setTimeout(() => {
      app.log.error('shutdown deadline passed with requests still running; exiting')
      process.exit(1)
    }, settings.shutdownMs).unref()
    // Fastify closes the connections idle at this moment; those of the requests still running turn
    // idle (keep-alive) when they answer and would hold the close open until their timeout.
    setInterval(() => app.server.closeIdleConnections(), 100).unref()
    try {
      await app.close()
      await store.close()
      process.exit(0)
    } catch (err) {
      app.log.error({ err }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  await app.listen({ host: settings.host, port: settings.port })
}

// A stray rejection (a background refresh, say) is logged; it must not take the service down.
process.on('unhandledRejection', (err) => {
  process.stderr.write(
    `verdict: unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  )
})

main().catch((err: unknown) => {
  process.stderr.write(`verdict: failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
