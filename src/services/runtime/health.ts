import type { RequestContext } from '../../context.js'

/** Liveness for probes and operators: answers even when the database does not (then `degraded`). */
export async function healthReport(ctx: RequestContext) {
  const reachable = await ctx.store.db.ping().catch(() => false)
  const cluster = ctx.cluster()
  return {
    status: reachable && !cluster.problem ? 'ok' : 'degraded',
    version: ctx.version,
    time: ctx.clock.now(),
    database: { engine: ctx.store.db.dialect, reachable },
    sources: ctx.intel.sources(),
    ai: ctx.explainer.status(),
    cluster,
  }
}
