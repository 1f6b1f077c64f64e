import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import { buildAdminApp } from './admin-app.js'
import { createExplainer } from './ai/index.js'
import { buildApp } from './app.js'
import { resolveSecret } from './config/secret.js'
import { loadSettings } from './config/settings.js'
import { loadIntel } from './intel/index.js'
import { backgroundJobs, Scheduler } from './jobs/index.js'
import { storeLease } from './jobs/lease.js'
import { Metrics } from './observability/metrics.js'
import { Readiness } from './observability/readiness.js'
import { SharedRedis } from './redis/connection.js'
import { RedisLimiter } from './redis/limiter.js'
import { announceFirstKey } from './services/access/first-key.js'
import { bootstrapDefaultTenant } from './services/access/tenants.js'
import { Ja4Signatures } from './services/devices/ja4-signatures.js'
import { AsnRates } from './services/network/asn-rates.js'
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
  const version = packageVersion()
  const logger = { level: settings.logLevel }
  // Operators see the start: with VERDICT_ADMIN_PORT, /readyz answers 503 (migrating) until the end of it.
  const obs = settings.observability
  // Imported only when on: the OpenTelemetry SDK takes a while to load.
  const tracing = obs.otlpEndpoint
    ? (await import('./observability/tracing.js')).Tracing.start(obs.otlpEndpoint, version)
    : undefined
  const metrics = new Metrics({ tenantLabels: obs.tenantLabels, ...(tracing ? { span: tracing.span } : {}) })
  const readiness = new Readiness('migrating')
  const admin = obs.adminPort === undefined ? null : await buildAdminApp({ readiness, metrics, logger })
  if (admin) await admin.listen({ host: settings.host, port: obs.adminPort })
  // Extra CAs for webhook https, added to the system's (a bad file stops the start here).
  const webhookCa = settings.webhooks.caFile
    ? [...rootCertificates, readFileSync(settings.webhooks.caFile, 'utf8')]
    : undefined
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
      ? { limiter: new RedisLimiter(redis, nodes, metrics), cluster: redisNodes(node, redis, jobsHeld) }
      : { cluster: singleNode(node, jobsHeld) }),
    intel,
    explainer: createExplainer(settings.ai, { now: () => clock.now(), signals: metrics }),
    store,
    clock,
    hasher: new Hasher(secret),
    version,
    trustProxy: settings.trustProxy,
    bodyLimitBytes: settings.bodyLimitBytes,
    keylessRateLimit: settings.keylessRateLimit,
    logger,
    observability: {
      metrics,
      tracing,
      readiness,
      probes: admin === null,
      metricsToken: obs.metricsToken,
    },
    asnRates,
    ja4Signatures,
    ja4Header: settings.ja4Header,
    overload: settings.overload,
    tenantLimits: settings.tenantLimits,
    webhooks: {
      allowHttp: settings.webhooks.allowHttp,
      allowPrivate: settings.webhooks.allowPrivate,
      ca: webhookCa,
      holder: node,
      userAgent: `verdict-webhooks/${packageVersion()}`,
    },
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
    { lease: storeLease(store.leases, node, () => clock.now()), leaseTtlMs, signals: metrics },
  )
  held = () => jobs.held
  jobs.start()
  // The webhook outbox is sent by every node; a delivery's lease keeps it to one node at a time.
  app.services.webhooks.log = app.log
  app.services.webhooks.start()
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
    readiness.set('stopping')
    setTimeout(() => {
      app.log.error('shutdown deadline passed with requests still running; exiting')
      process.exit(1)
    }, settings.shutdownMs).unref()
    // Fastify closes the connections idle at this moment; those of the requests still running turn
    // idle (keep-alive) when they answer and would hold the close open until their timeout.
    setInterval(() => app.server.closeIdleConnections(), 100).unref()
    try {
      await Promise.all([app.close(), jobs.stop(), app.services.webhooks.stop()])
      await store.close()
      await redis?.close()
      await tracing?.shutdown().catch(() => {})
      await admin?.close()
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
  readiness.set('ready')
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
