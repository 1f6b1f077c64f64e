import { createExplainer } from './ai/index.js'
import { buildApp } from './app.js'
import { resolveSecret } from './config/secret.js'
import { loadSettings } from './config/settings.js'
import { loadIntel } from './intel/index.js'
import { backgroundJobs, Scheduler } from './jobs/index.js'
import { storeLease } from './jobs/lease.js'
import { SharedRedis } from './redis/connection.js'
import { RedisLimiter } from './redis/limiter.js'
import { announceFirstKey } from './services/access/first-key.js'
import { bootstrapDefaultTenant } from './services/access/tenants.js'
import { Ja4Signatures } from './services/devices/ja4-signatures.js'
import { AsnRates } from './services/network/network.js'
import { redisNodes, singleNode } from './services/runtime/cluster.js'
import { withStartupLock } from './services/runtime/startup-lock.js'
import { openStore } from './store/index.js'
import { httpsListenText, readTlsCredentials, terminateTls } from './tls/capture.js'
import { systemClock } from './util/clock.js'
import { Hasher, randomToken } from './util/secrets.js'
import { packageVersion } from './version.js'

async function main(): Promise<void> {
  const settings = loadSettings()
  // Read before anything is opened, so a bad certificate stops the start with its own message.
  const tlsCredentials = settings.tls && readTlsCredentials(settings.tls)
  // Concurrent first starts: one process migrates (and below, creates tenant `default`), the others wait.
  const store = await withStartupLock(settings.storage, () => openStore(settings.storage))
  const secret = await resolveSecret(store, settings.storage, settings.secret)
  const clock = systemClock
  const intel = await loadIntel({
    feedsDir: settings.feeds.dir,
    email: {
      mx: {
        now: () => clock.now(),
        timeoutMs: settings.email.dnsTimeoutMs,
        canary: settings.email.dnsCanary,
        ...(settings.email.dnsServers ? { servers: settings.email.dnsServers } : {}),
      },
      catchAll: { enabled: settings.email.smtpProbe },
    },
  })
  const asnRates = new AsnRates()
  const ja4Signatures = new Ja4Signatures()
  // Several nodes: limits shared through Redis when configured; job leases live in the database.
  const node = randomToken(8).toLowerCase()
  const { redisUrl, redisPrefix, nodes, leaseTtlMs } = settings.cluster
  const redis = redisUrl ? new SharedRedis(redisUrl, redisPrefix) : null
  let held: () => string[] = () => []
  const jobsHeld = () => held()
  const app = await buildApp({
    ...(redis
      ? { limiter: new RedisLimiter(redis, nodes), cluster: redisNodes(node, redis, jobsHeld) }
      : { cluster: singleNode(node, jobsHeld) }),
    intel,
    explainer: createExplainer(settings.ai, { now: () => clock.now() }),
    store,
    clock,
    hasher: new Hasher(secret),
    version: packageVersion(),
    trustProxy: settings.trustProxy,
    bodyLimitBytes: settings.bodyLimitBytes,
    keylessRateLimit: settings.keylessRateLimit,
    logger: { level: settings.logLevel },
    asnRates,
    ja4Signatures,
    ja4Header: settings.ja4Header,
    overload: settings.overload,
  })
  // The only place background jobs start (src/jobs/).
  const jobs = new Scheduler(
    backgroundJobs({ feedsReloadMs: settings.feeds.reloadMs, retentionDays: settings.retentionDays }),
    {
      store,
      clock,
      intel,
      asnRates,
      ja4Signatures,
      log: app.log,
    },
    { lease: storeLease(store.leases, node, () => clock.now()), leaseTtlMs },
  )
  held = () => jobs.held
  jobs.start()
  if (!redis && settings.storage.kind === 'postgres')
    app.log.warn(
      { node },
      'REDIS_URL is not set: rate limits are counted per process (caches are still invalidated on every node through PostgreSQL)',
    )
  const created = await withStartupLock(settings.storage, () => bootstrapDefaultTenant(store, clock))
  if (created) {
    announceFirstKey(created, settings.firstKeyFile, (text) => process.stderr.write(text))
    app.log.info(
      { tenant: created.tenantId, key_id: created.keyId },
      'first start: created tenant "default"; its API key was shown once on the terminal (stderr), never in this log',
    )
  }
  // Stop accepting, let in-flight requests and job runs finish, close storage; past the deadline, exit anyway.
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
      await Promise.all([app.close(), jobs.stop()])
      await store.close()
      await redis?.close()
      process.exit(0)
    } catch (err) {
      app.log.error({ err }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  if (tlsCredentials) terminateTls(app.server, tlsCredentials)
  await app.listen({
    host: settings.host,
    port: settings.port,
    ...(tlsCredentials ? { listenTextResolver: httpsListenText } : {}),
  })
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
