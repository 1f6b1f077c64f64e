import type { RequestContext } from '../../context.js'
import type { HealthSource } from '../../intel/index.js'

/** Liveness for probes and operators: answers even when the database does not (then `degraded`). */
export async function healthReport(ctx: RequestContext) {
  const reachable = await ctx.store.db.ping().catch(() => false)
  const cluster = ctx.cluster()
  const sources = ctx.intel.sources()
  return {
    status: reachable && !cluster.problem ? 'ok' : 'degraded',
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
