import type { RequestContext } from '../../context.js'
import type { HealthSource } from '../../intel/index.js'

/** Why health is degraded, the one thing a caller without a key is told. */
export type HealthReason = 'database_unreachable' | 'redis_unreachable'

/**
 * Liveness for probes and operators: answers even when the database does not (then `degraded`).
 * Without a key the answer is the status and, when degraded, a reason code only: the details (Redis's
 * address in `problem`, version, sources, AI provider) are for a caller with a key.
 */
export async function healthReport(ctx: RequestContext, detailed: boolean) {
  const reachable = await ctx.store.db.ping().catch(() => false)
  const cluster = ctx.cluster()
  const reason: HealthReason | undefined = !reachable
    ? 'database_unreachable'
    : cluster.problem
      ? 'redis_unreachable'
      : undefined
  const status = reason ? 'degraded' : 'ok'
  const short = reason ? { status, reason } : { status }
  if (!detailed) return short
  const sources = ctx.intel.sources()
  return {
    ...short,
    version: ctx.version,
    time: ctx.clock.now(),
    database: { engine: ctx.store.db.dialect, reachable },
    checks: { feeds: feedCheck(sources), resolver: await ctx.intel.email.resolverHealth() },
    sources,
    ai: ctx.explainer.status(),
    cluster,
  }
}

/** Feeds without data leave their signals unknown (a warning on every score): say which, and the fix. */
function feedCheck(sources: HealthSource[]) {
  const missing = sources.filter((s) => s.kind === 'feed' && !s.loaded).map((s) => s.name)
  return {
    status: missing.length ? ('missing' as const) : ('ok' as const),
    missing,
    fix: missing.length
      ? 'npx verdict feeds update (or feeds import NAME FILE offline); the server reloads them by itself'
      : null,
  }
}
